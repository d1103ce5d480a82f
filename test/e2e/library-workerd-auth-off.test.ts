/** The media library suite (library-suite.ts) on the Worker on workerd, auth off. */
import { describeLibrary } from "./library-suite.js";
import { workerdTarget } from "./library-targets.js";

describeLibrary({ "workerd-auth-off": workerdTarget("auth-off") });
