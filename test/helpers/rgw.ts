/**
 * A real S3 for tests: Ceph RGW 16 (Debian's radosgw, ceph-mon, ceph-osd, ceph-common; see
 * scripts/ensure-system-packages.mjs) as a one-node cluster on 127.0.0.1 in a temporary folder: one
 * monitor, one OSD on memstore (RAM, no disk to prepare), radosgw with the beast frontend on a free
 * loopback port, a user with fixed keys. Daemons talk cephx with one generated keyring: with
 * `auth … required = none` radosgw 16 never gets past its monitor handshake (EACCES, then a 300 s
 * timeout). Every daemon's log is in `<dir>/log/`.
 *
 * One cluster per test run: `sharedRgw()` starts it in the first test file that asks (a lock in the
 * run folder test/helpers/rgw-global.ts makes), later files reuse it, and that global setup's
 * teardown kills every daemon at the end of the run, or its watchdog does if vitest dies.
 * `node scripts/rgw-cluster.mjs` starts one by hand.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { join } from "node:path";
import { AwsClient } from "aws4fetch";
import { freePort } from "./ports.js";

const run = promisify(execFile);

/** The user every test signs as (RGW verifies SigV4, so a wrong secret is refused). */
export const RGW_ACCESS_KEY_ID = "CMSTESTACCESSKEY0001";
export const RGW_SECRET_ACCESS_KEY = "cms-test-secret-key-for-rgw-on-loopback";
/** How long radosgw may take to open its port (about 11 s here, 17 s on a loaded machine). */
const READY_TIMEOUT_MS = 60_000;
/**
 * Start-ups `sharedRgw` tries. Seen once in CI (stop 45): radosgw made its pools and then never
 * opened its port while the run's first files loaded the machine; a second start-up in a fresh
 * folder on fresh ports costs ~20 s and only when the first one fails.
 */
const STARTUP_ATTEMPTS = 2;

export interface RgwCluster {
  /** `http://127.0.0.1:<port>`: radosgw's S3 API (path-style). */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The cluster's folder: ceph.conf, keyring, mon and OSD data, `log/`. */
  dir: string;
  /** The daemons' process ids (mon, osd, radosgw). */
  pids: number[];
  /** Milliseconds from nothing to a user that can sign requests. */
  startupMs: number;
}

/** The settings that point the service at a bucket of `rgw`, under `prefix` if given. */
export const rgwSettings = (rgw: RgwCluster, bucket: string, prefix?: string): Record<string, string> => ({
  CMS_STORAGE: "s3",
  CMS_S3_ENDPOINT: rgw.endpoint,
  CMS_S3_BUCKET: bucket,
  CMS_S3_ACCESS_KEY_ID: rgw.accessKeyId,
  CMS_S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
  ...(prefix ? { CMS_S3_PREFIX: prefix } : {}),
});

const client = (rgw: RgwCluster) =>
  new AwsClient({
    accessKeyId: rgw.accessKeyId,
    secretAccessKey: rgw.secretAccessKey,
    service: "s3",
    region: "us-east-1",
  });

/** Creates a bucket (PUT Bucket, signed). The first one takes a few seconds: RGW makes its data pool. */
export async function createRgwBucket(rgw: RgwCluster, bucket: string): Promise<void> {
  const res = await client(rgw).fetch(`${rgw.endpoint}/${bucket}`, { method: "PUT" });
  if (res.status !== 200) throw new Error(`creating bucket ${bucket}: HTTP ${res.status} ${await res.text()}`);
  await res.body?.cancel();
}

/** Every object key in `bucket` under `prefix` (at most 1000: tests keep buckets small). */
export async function rgwObjectKeys(rgw: RgwCluster, bucket: string, prefix = ""): Promise<string[]> {
  const url = `${rgw.endpoint}/${bucket}?list-type=2&max-keys=1000&prefix=${encodeURIComponent(prefix)}`;
  const res = await client(rgw).fetch(url);
  const xml = await res.text();
  if (res.status !== 200) throw new Error(`listing ${bucket}: HTTP ${res.status} ${xml}`);
  return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!.replace(/&amp;/g, "&")).sort();
}

function conf(dir: string, monPort: number, rgwPort: number, fsid: string, memstoreBytes: number): string {
  return `[global]
fsid = ${fsid}
mon host = v2:127.0.0.1:${monPort}
public addr = 127.0.0.1
ms bind ipv6 = false
ms bind msgr1 = false
keyring = ${dir}/keyring
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
log file = ${dir}/log/$name.log
log to stderr = false
err to stderr = false
mon data = ${dir}/mon
osd data = ${dir}/osd$id
osd objectstore = memstore
memstore device bytes = ${memstoreBytes}
# One OSD: one copy, placement by OSD (not host), few PGs, no warnings about it.
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
auth allow insecure global id reclaim = false

[client.rgw]
rgw data = ${dir}/rgw
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
`;
}

/**
 * Starts a cluster in `dir` (created; left for the caller to remove). Daemons run in the foreground
 * of their own process group (`detached`), so they outlive the test worker that started them:
 * stop them with `stopRgwCluster`.
 */
/** `memstoreBytes`: the OSD's RAM store (1 GiB for the tests; bench/direct-storage.ts asks for more). */
export async function startRgwCluster(dir: string, { memstoreBytes = 1024 ** 3 } = {}): Promise<RgwCluster> {
  const started = Date.now();
  for (const sub of ["mon", "osd0", "run", "log", "rgw"]) await mkdir(join(dir, sub), { recursive: true });
  // Probed, not port 0: the monitor's address is written into the monmap before it starts, and
  // radosgw's beast frontend does not report a port 0 took. Not retried on a lost race either: the
  // cluster is started once a run (rgw-global.ts), and a retry is the whole start-up again.
  const [monPort, rgwPort] = [await freePort(), await freePort()];
  const fsid = crypto.randomUUID();
  const cfg = join(dir, "ceph.conf");
  await writeFile(cfg, conf(dir, monPort, rgwPort, fsid, memstoreBytes));
  const keyring = join(dir, "keyring");
  const env = { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" };
  const ceph = (command: string, args: string[]) =>
    run(command, ["-c", cfg, ...args], { env, timeout: READY_TIMEOUT_MS }).then((r) => r.stdout.trim());
  const pids: number[] = [];
  const children: ChildProcess[] = [];
  const daemon = (command: string, args: string[]) => {
    // Not killed when this process exits: the run's cluster outlives the test file that started it.
    const child = spawn(command, ["-f", "-c", cfg, ...args], { env, detached: true, stdio: "ignore" });
    child.unref();
    if (child.pid) pids.push(child.pid);
    children.push(child);
  };

  try {
    const keys: [string, string[]][] = [
      ["mon.", ["--cap", "mon", "allow *"]],
      ["client.admin", ["--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mgr", "allow *"]],
      ["osd.0", ["--cap", "mon", "allow profile osd", "--cap", "osd", "allow *"]],
      ["client.rgw", ["--cap", "mon", "allow rw", "--cap", "osd", "allow rwx"]],
    ];
    for (const [i, [name, caps]] of keys.entries()) {
      await run("ceph-authtool", [...(i === 0 ? ["--create-keyring"] : []), keyring, "--gen-key", "-n", name, ...caps]);
    }
    const monmap = join(dir, "monmap");
    await run("monmaptool", ["--create", "--fsid", fsid, "--addv", "a", `[v2:127.0.0.1:${monPort}]`, monmap]);
    await ceph("ceph-mon", ["--mkfs", "-i", "a", "--monmap", monmap]);
    daemon("ceph-mon", ["-i", "a"]);

    const osdUuid = crypto.randomUUID();
    const id = await ceph("ceph", ["--connect-timeout", "30", "osd", "new", osdUuid]);
    await ceph("ceph-osd", ["-i", id, "--mkfs", "--osd-uuid", osdUuid]);
    daemon("ceph-osd", ["-i", id]);

    // radosgw makes its pools on start (they need the OSD up) and opens its port last.
    daemon("radosgw", ["-n", "client.rgw"]);
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    for (const deadline = Date.now() + READY_TIMEOUT_MS; ; ) {
      // Bounded: a probe that hangs must not eat the deadline.
      const res = await fetch(endpoint, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
      await res?.body?.cancel();
      if (res) break;
      if (Date.now() > deadline) throw new Error(`radosgw did not answer on ${endpoint}`);
      const dead = children.find((c) => c.exitCode !== null || c.signalCode !== null);
      if (dead) throw new Error(`${dead.spawnfile} exited (${dead.exitCode ?? dead.signalCode})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await ceph("radosgw-admin", [
      "user",
      "create",
      "--uid=cms",
      "--display-name=cms tests",
      `--access-key=${RGW_ACCESS_KEY_ID}`,
      `--secret-key=${RGW_SECRET_ACCESS_KEY}`,
    ]);
    return {
      endpoint,
      accessKeyId: RGW_ACCESS_KEY_ID,
      secretAccessKey: RGW_SECRET_ACCESS_KEY,
      dir,
      pids,
      startupMs: Date.now() - started,
    };
  } catch (err) {
    await stopRgwCluster(pids);
    // radosgw's log first and longest: CI keeps only part of a long failure.
    const logs = await Promise.all(
      (
        [
          ["client.rgw", 4000],
          ["osd.0", 800],
          ["mon.a", 800],
        ] as const
      ).map(async ([name, chars]) =>
        readFile(join(dir, "log", `${name}.log`), "utf8").then(
          (text) => `--- ${name}.log (end)\n${text.slice(-chars)}`,
          () => "",
        ),
      ),
    );
    throw new Error(`Ceph RGW did not start in ${dir}: ${(err as Error).message}\n${logs.join("\n")}`);
  }
}

/** Kills the daemons (SIGTERM, then SIGKILL after 5 s): their whole process groups. */
export async function stopRgwCluster(pids: number[]): Promise<void> {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const signal = (sig: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(-pid, sig);
      } catch {
        // already gone
      }
    }
  };
  signal("SIGTERM");
  for (const deadline = Date.now() + 5_000; pids.some(alive) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  signal("SIGKILL");
}

/** The run folder test/helpers/rgw-global.ts made for this vitest run (provided to every test file). */
declare module "vitest" {
  interface ProvidedContext {
    rgwRunDir: string;
  }
}

const CLUSTER_FILE = "cluster.json";
const FAILED_FILE = "failed.txt";

/**
 * The run's one cluster: started by the first caller (the one that makes `<runDir>/lock`), read
 * from `<runDir>/cluster.json` by every other. The global teardown stops it.
 */
export async function sharedRgw(): Promise<RgwCluster> {
  const { inject } = await import("vitest");
  const runDir = inject("rgwRunDir");
  if (!runDir) throw new Error("no rgwRunDir: test/helpers/rgw-global.ts is not in this project's globalSetup");
  const won = await mkdir(join(runDir, "lock")).then(
    () => true,
    () => false,
  );
  if (won) {
    try {
      const cluster = await startWithRetry(runDir);
      console.log(`Ceph RGW (mon, memstore OSD, radosgw) up on ${cluster.endpoint} in ${cluster.startupMs} ms`);
      await writeFile(join(runDir, "pids"), cluster.pids.join(" "));
      await writeFile(join(runDir, `${CLUSTER_FILE}.tmp`), JSON.stringify(cluster));
      await rename(join(runDir, `${CLUSTER_FILE}.tmp`), join(runDir, CLUSTER_FILE)); // readers see all or nothing
      return cluster;
    } catch (err) {
      await writeFile(join(runDir, FAILED_FILE), (err as Error).message);
      throw err;
    }
  }
  for (const deadline = Date.now() + STARTUP_ATTEMPTS * (READY_TIMEOUT_MS + 30_000); Date.now() < deadline; ) {
    const failed = await readFile(join(runDir, FAILED_FILE), "utf8").catch(() => null);
    if (failed !== null) throw new Error(`the run's Ceph cluster failed to start (in another file):\n${failed}`);
    const ready = await readFile(join(runDir, CLUSTER_FILE), "utf8").catch(() => null);
    if (ready !== null) return JSON.parse(ready) as RgwCluster;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("timed out waiting for the run's Ceph cluster");
}

/** The run's cluster, started again in a fresh folder on fresh ports if a start-up fails. */
async function startWithRetry(runDir: string): Promise<RgwCluster> {
  const failures: string[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRgwCluster(join(runDir, attempt === 1 ? "ceph" : `ceph-${attempt}`));
    } catch (err) {
      failures.push(`start-up ${attempt}: ${(err as Error).message}`);
      if (attempt === STARTUP_ATTEMPTS) throw new Error(failures.join("\n\n"));
      console.warn(`Ceph RGW start-up ${attempt} of ${STARTUP_ATTEMPTS} failed; starting again:\n${failures.at(-1)}`);
    }
  }
}
