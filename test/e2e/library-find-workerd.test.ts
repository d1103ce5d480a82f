/** The media library's finding and describing (library-find-suite.ts) on the Worker on workerd, auth on. */
import { describeFind } from "./library-find-suite.js";
import { workerdTarget } from "./library-targets.js";

describeFind("workerd-auth-on", workerdTarget("auth-on"));
