// `node --import` this file (through NODE_OPTIONS) to record every module the process imports: each
// resolved URL is appended, one per line, to the file named by MODULE_TRACE_FILE (the hooks run on
// Node's loader thread: module.register).
import { register } from "node:module";

register(new URL("./module-trace-hooks.mjs", import.meta.url), { data: { file: process.env.MODULE_TRACE_FILE } });
