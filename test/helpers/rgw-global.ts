/**
 * vitest globalSetup: a run folder for the run's one Ceph cluster (test/helpers/rgw.ts starts it
 * only if a test file asks), and its end: every daemon killed and the folder removed when the run
 * ends, or by a watchdog shell if vitest itself is killed first.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { stopRgwCluster } from "./rgw.js";

export default async function setup(project: TestProject) {
  const runDir = await mkdtemp(join(tmpdir(), "cms-rgw-run-"));
  project.provide("rgwRunDir", runDir);
  // Polls for this process every 2 s; once it is gone, kills whatever the run's cluster left.
  const watchdog = spawn(
    "sh",
    [
      "-c",
      'while kill -0 "$1" 2>/dev/null; do sleep 2; done; [ -f "$2/pids" ] && for p in $(cat "$2/pids"); do kill -9 -"$p"; done; rm -rf "$2"',
      "rgw-watchdog",
      String(process.pid),
      runDir,
    ],
    { detached: true, stdio: "ignore" },
  );
  watchdog.unref();
  return async () => {
    const pids = await readFile(join(runDir, "pids"), "utf8").catch(() => "");
    await stopRgwCluster(pids.split(/\s+/).filter(Boolean).map(Number));
    watchdog.kill("SIGKILL");
    await rm(runDir, { recursive: true, force: true });
  };
}
