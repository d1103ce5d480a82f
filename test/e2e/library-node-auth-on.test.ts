/** The media library suite (library-suite.ts) on the Node server, auth on through the dev IdP. */
import { describeLibrary } from "./library-suite.js";
import { nodeTarget } from "./library-targets.js";

describeLibrary({ "node-auth-on": nodeTarget("auth-on") });
