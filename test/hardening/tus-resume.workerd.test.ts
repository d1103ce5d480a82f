/** tus-js-client resuming a cut and restarted upload on workerd (the case: tus-resume.ts). */
import { describeTusResume } from "./tus-resume.js";

describeTusResume(["workerd"]);
