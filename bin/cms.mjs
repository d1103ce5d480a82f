#!/usr/bin/env node
// The `cms` command (package.json "bin"): runs src/cli/main.ts through tsx, a dependency, so it
// works straight after `npm ci` with no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
