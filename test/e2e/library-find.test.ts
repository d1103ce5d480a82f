/** The media library's finding and describing (library-find-suite.ts) on the Node server, auth on. */
import { describeFind } from "./library-find-suite.js";
import { nodeTarget } from "./library-targets.js";

describeFind("node-auth-on", nodeTarget("auth-on"));
