/** tus-js-client resuming a cut and restarted upload on Node and Bun (the case: tus-resume.ts). */
import { describeTusResume } from "./tus-resume.js";

describeTusResume(["node", "bun"]);
