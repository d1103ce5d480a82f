// Loader hooks for module-trace.mjs: appends each resolved module URL to the trace file.
import { appendFileSync } from "node:fs";

let file;
export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (file) appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
