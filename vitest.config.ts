// Tool config: vitest expects a default export.
import { availableParallelism } from "node:os";
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { DurationsRecorder, SlowestFirstSequencer } from "./test/helpers/slowest-first.js";
import { SummaryReporter } from "./test/helpers/summary-reporter.js";

/** Files that run in the test process with no bundle and no process-wide state of their own. */
const SHARED = [
  "test/{auth,client,http,lib,metadata,origin,routes,services,zip}/**/*.test.ts",
  // All drivers but Ceph's: its cluster is the isolated project's (whose globalSetup runs it once).
  "test/storage/**/!(rgw).test.ts",
  "test/config.test.ts",
  // In-process specs and units of the runtime, cache and metrics folders (the rest of those start processes).
  "test/runtime/{access-log,batched-lines,collector-schedule,commit-signal,in-process-fetch,pass-schedule,prepared-lookup,server-deps}.test.ts",
  "test/cache/versioned-urls.test.ts",
  "test/metrics/metrics-endpoint.test.ts",
  // In-process specs of search, images, webhooks, the IdP and the acceptance suite on Node. Not the
  // files that spawn processes (bun, peak-rss, spool-sweep), that patch net/dns (hardening/fuzz),
  // nor images/timeout, which reads sharp's process-wide counters.
  "test/search/**/*.test.ts",
  "test/images/!(bun|peak-rss|spool-sweep|timeout).test.ts",
  "test/webhooks/{confinement,connect-policy,outbox,webhooks}.test.ts",
  "test/idp/{idp,keycloak-realm}.test.ts",
  "test/hardening/{openapi-arbitraries,parsers-fuzz}.test.ts",
  "test/acceptance/node.test.ts",
  "test/direct/signed-link-redirect.test.ts",
];

/**
 * The `node` files that still get a process each (project node-isolated): each changes or reads
 * something process-wide that another file in the same worker would change or see.
 */
const ISOLATED = [
  // Replaces dns.lookup and net.Socket.prototype.connect while it runs (its network rule).
  "test/hardening/fuzz.test.ts",
  // Counts sharp's process-wide tasks: another file's images in the same process would be counted.
  "test/images/timeout.test.ts",
  // Asserts AsyncLocalStorage's promise hooks are off: once on (any file that entered a storage), they stay on.
  "test/runtime/async-context-off.test.ts",
  // Times this process's event loop (a stall under 100 ms): a shared worker's heap, grown by earlier
  // files, and their leftovers count against it (161 ms once in a shared run at load average 14).
  "test/runtime/sqlite-file-client.test.ts",
];

/**
 * The heavy lane: Chromium's pages, workerd and the container image (podman), each a core when busy. They run
 * after the rest (sequence.groupOrder), two at a time, so they are never beside the files that time
 * things (throughput, timeouts, peak RSS, collector passes): those failed when a full run put three
 * Chromium files beside them (load average 10-34 on 2 cores).
 */
const HEAVY = [
  "test/e2e/**/*.test.ts",
  // test/ only: a bench checkout of another commit (bench/.work, `--compare --keep`) holds test files too.
  "test/**/*workerd*.test.ts",
  "test/container/**/*.test.ts",
  "test/examples/video-page.test.ts",
];
const HEAVY_WORKERS = 2;
const heavyLane: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: "heavy",
    include: HEAVY,
    pool: "forks",
    // A worker keeps its imports (playwright, sharp, the app) from file to file, as node-shared does:
    // collecting the 13 Chromium and workerd files (no test run, the bundles' build included) took
    // 62 s of CPU isolated, 21 s shared. Each file still starts its own servers, browser, temp dirs.
    isolate: false,
    globalSetup: ["test/global-setup.ts"], // the built bundles (built once a run: global-setup.ts)
    maxWorkers: HEAVY_WORKERS,
    sequence: { groupOrder: 1 },
  },
};

/**
 * CMS_TESTS=node-subjects: only the files whose subject runs on Node, for CI's second pass on
 * another Node version when the machine is too slow for two whole passes (.ci/run): not Chromium's
 * pages (test/e2e) nor workerd (files named *workerd*, and the workers project), which are the same
 * programs whichever Node starts them.
 */
const NODE_SUBJECTS_ONLY = process.env.CMS_TESTS === "node-subjects";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Most files spend their time waiting on child processes (servers, Chromium, workerd), so on a
    // small machine vitest's default (cores - 1, one worker on 2 cores) leaves a core idle: 3
    // workers took the suite from 7 min to 4 min on 2 cores (4 workers: no faster).
    maxWorkers: Math.max(3, availableParallelism() - 1),
    reporters: ["default", new SummaryReporter(), new DurationsRecorder()],
    setupFiles: ["test/helpers/byte-equality.ts"],
    sequence: { sequencer: SlowestFirstSequencer },
    // One run, one summary line: Node-side tests in forks, and test/workers/ inside workerd.
    projects: [
      {
        extends: true,
        test: {
          name: "node",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/workers/**", ...SHARED, ...HEAVY, ...ISOLATED],
          pool: "forks",
          // Files that start processes, sockets and servers of their own: a worker keeps its imports
          // (the app, the helpers) from file to file, as node-shared does; isolated, importing them
          // again took 187 s of the project's 930 s of file time (≈ 2.4 s a file). Each file still
          // starts its own servers, databases and temp dirs; stubs are undone after each test. The
          // few that touch process-wide state run isolated (ISOLATED, project node-isolated).
          isolate: false,
          unstubEnvs: true,
          unstubGlobals: true,
          restoreMocks: true,
          // Process tests start the server as shipped: the esbuild bundle. rgw-global: the run's one
          // Ceph cluster (started only if a test asks for it), torn down at the end; one per project
          // that lists it, so every file that uses Ceph stays in this one.
          globalSetup: ["test/global-setup.ts", "test/helpers/rgw-global.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "node-isolated",
          include: ISOLATED,
          pool: "forks",
          globalSetup: ["test/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          // Specifications that run the app in this process (or a driver, a store, a library):
          // each file re-importing the app cost more than its tests (test/routes: 152 s of CPU
          // isolated, 68 s sharing one module cache per worker), so a worker keeps its imports
          // from file to file. Each file still builds its own app, database and temp dirs, and
          // environment stubs are undone after each test.
          name: "node-shared",
          include: SHARED,
          pool: "forks",
          isolate: false,
          unstubEnvs: true,
          unstubGlobals: true,
          restoreMocks: true,
        },
      },
      ...(NODE_SUBJECTS_ONLY ? [] : [heavyLane, "./vitest.workers.config.ts"]),
    ],
  },
});
