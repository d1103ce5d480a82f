/**
 * The shipped Node entry point, unchanged: importing src/node.ts runs it (bootstrap, serve, signals).
 * The service is started through this one-line wrapper only so that its command line does not
 * contain "src/node.ts": on the shared bench machine other suites' cleanups (`pkill -f …src/node.ts`)
 * were stopping the benchmark's servers mid-run.
 */
import "../../src/node.js";
