/**
 * The shipped Node entry point, unchanged: importing src/node.ts runs it (bootstrap, serve, signals).
 * bench/profile.ts runs it through tsx (one module URL per file, for per-file attribution); the bench
 * itself runs the shipped bundle, dist/node/server.mjs. Started through this one-line wrapper only so
 * that its command line does not contain "src/node.ts": on the shared bench machine other suites'
 * cleanups (`pkill -f …src/node.ts`) were stopping the benchmark's servers mid-run. (The bundle's
 * command line, `node …/dist/node/server.mjs`, does not contain it either.)
 */
import "../../src/node.js";
