/** The media library suite (library-suite.ts) on the Node server, auth off. */
import { describeLibrary } from "./library-suite.js";
import { nodeTarget } from "./library-targets.js";

describeLibrary({ "node-auth-off": nodeTarget("auth-off") });
