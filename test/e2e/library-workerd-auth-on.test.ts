/** The media library suite (library-suite.ts) on the Worker on workerd, auth on through the dev IdP. */
import { describeLibrary } from "./library-suite.js";
import { workerdTarget } from "./library-targets.js";

describeLibrary({ "workerd-auth-on": workerdTarget("auth-on") });
