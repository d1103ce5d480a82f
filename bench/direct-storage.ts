/**
 * docs/direct-storage.md "Measured": uploads through upload URLs against uploadResource of the same
 * bytes, and direct reads against streamed ones, on the built Node server (dist/node/server.mjs) over
 * a one-node Ceph RGW (test/helpers/rgw.ts, memstore sized for the run). Every ratio is against a
 * reference measured in the same run. Counted:
 *   - the service's CPU (user + system, /proc/<pid>/stat; Linux), also while it idles;
 *   - bytes on the service's listening socket (a counting TCP relay in front of it, both directions);
 *   - bytes between the service and the bucket (a counting relay in front of RGW; the bench's own
 *     connections through it are told apart by their local port).
 *   node --import tsx bench/direct-storage.ts [bigBytes=1GiB] [count=16] [eachBytes=64MiB]
 * bigBytes 0 leaves the one big upload out.
 * BENCH_PROFILE_DIR=dir: the service (the redirecting one) writes a V8 CPU profile there when it stops.
 * Needs `npm run build` first and the Ceph packages (scripts/ensure-system-packages.mjs).
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, openAsBlob, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { finished } from "node:stream/promises";
import { createRgwBucket, rgwSettings, startRgwCluster, stopRgwCluster } from "../test/helpers/rgw.js";
import { type ServerProcess, spawnServer } from "../test/helpers/spawn-server.js";

const MiB = 1024 * 1024;
const [bigBytes = 1024 * MiB, count = 16, eachBytes = 64 * MiB] = process.argv.slice(2).map(Number);
const API = "/cms/v1.0";
const REF_WAVE = 4;
const BUCKET = "bench";

/** user + system CPU milliseconds of `pid` so far (USER_HZ = 100). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A TCP relay on 127.0.0.1:0 to `port` that counts the bytes each way, per client port if asked. */
async function countingRelay(port: number) {
  const totals = { up: 0, down: 0 };
  const byClientPort = new Map<number, { up: number; down: number }>();
  const server: Server = createServer((client: Socket) => {
    const upstream = createConnection({ host: "127.0.0.1", port });
    const mine = { up: 0, down: 0 };
    byClientPort.set(client.remotePort ?? 0, mine);
    client.on("data", (chunk: Buffer) => {
      totals.up += chunk.length;
      mine.up += chunk.length;
    });
    upstream.on("data", (chunk: Buffer) => {
      totals.down += chunk.length;
      mine.down += chunk.length;
    });
    client.pipe(upstream).on("error", () => client.destroy());
    upstream.pipe(client).on("error", () => upstream.destroy());
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const relayPort = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${relayPort}`,
    totals: () => ({ ...totals }),
    /** Bytes of connections that did not come from `ports` (another process's: the service's). */
    othersThan(ports: Set<number>) {
      let up = 0;
      let down = 0;
      for (const [clientPort, c] of byClientPort)
        if (!ports.has(clientPort)) {
          up += c.up;
          down += c.down;
        }
      return { up, down };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function randomFile(path: string, size: number): Promise<string> {
  const out = createWriteStream(path);
  for (let left = size; left > 0; left -= 4 * MiB) out.write(randomBytes(Math.min(4 * MiB, left)));
  out.end();
  await finished(out);
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** PUTs `path` (exactly its bytes, Content-Length set: it is signed) to `url`; records the local port. */
function putFile(
  url: string,
  headers: Record<string, string>,
  path: string,
  size: number,
  ports: Set<number>,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "PUT", headers: { ...headers, "content-length": String(size) } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("socket", (socket) => socket.on("connect", () => ports.add(socket.localPort ?? 0)));
    req.on("error", reject);
    createReadStream(path).pipe(req);
  });
}

const ms = (from: number) => Math.round(performance.now() - from);
const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(2)} %`;
const mib = (bytes: number) => (bytes < MiB ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / MiB).toFixed(2)} MiB`);
const profileDir = process.env.BENCH_PROFILE_DIR;

const dir = await mkdtemp(join(tmpdir(), "cms-bench-direct-"));
const stopping: (() => Promise<unknown>)[] = [];
try {
  // Room for every object of the run (uploads are not deleted; RGW frees tails only by its GC).
  const rgw = await startRgwCluster(join(dir, "rgw"), {
    memstoreBytes: 3 * (bigBytes + count * eachBytes) + 512 * MiB,
  });
  stopping.push(() => stopRgwCluster(rgw.pids));
  await createRgwBucket(rgw, BUCKET);
  const bucketRelay = await countingRelay(Number(new URL(rgw.endpoint).port));
  stopping.push(bucketRelay.close);
  const benchPorts = new Set<number>(); // the bench's own connections to the bucket relay

  const env = {
    ...rgwSettings({ ...rgw, endpoint: bucketRelay.url }, BUCKET),
    CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
    CMS_MAX_RESOURCE_BYTES: String(2 * Math.max(bigBytes, eachBytes)),
    CMS_LOG_LEVEL: "info",
  };
  const server: ServerProcess = await spawnServer(
    { ...env, CMS_DIRECT_READ_MIN_BYTES: String(MiB) },
    profileDir
      ? { command: process.execPath, args: ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "dist/node/server.mjs"] }
      : "node",
  );
  stopping.push(() => server.stop());
  // The streamed reference for reads: a second instance on the same database and bucket, no redirects.
  const streamer: ServerProcess = await spawnServer(env);
  stopping.push(() => streamer.stop());
  const pid = server.child.pid as number;
  const front = await countingRelay(Number(new URL(server.url).port));
  stopping.push(front.close);

  const post = async (verb: string, body: unknown) => {
    const res = await fetch(`${front.url}${API}/${verb}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${verb}: ${res.status} ${JSON.stringify(json)}`);
    return { json, location: res.headers.get("location") ?? "" };
  };
  async function direct(path: string, size: number, sha256: string, tenant: string) {
    const t = (
      await post("createUploadURL", {
        resourceName: "big.bin",
        resourceTenantId: tenant,
        resourceAuthor: "bench",
        size,
        sha256,
      })
    ).json as { uploadId: string; url: string; headers: Record<string, string> };
    const t0 = performance.now();
    const status = await putFile(t.url, t.headers, path, size, benchPorts);
    if (status !== 200) throw new Error(`PUT to the bucket: ${status}`);
    const putMs = ms(t0);
    const t1 = performance.now();
    const done = await post("completeUpload", { uploadId: t.uploadId });
    return { putMs, completeMs: ms(t1), location: done.location };
  }
  async function throughService(path: string, tenant: string) {
    const form = new FormData();
    form.set("resourceTenantId", tenant);
    form.set("resourceAuthor", "bench");
    form.set("resourceName", "big.bin");
    form.set("file", await openAsBlob(path), "big.bin");
    const res = await fetch(`${front.url}${API}/uploadResource`, { method: "POST", body: form });
    const text = await res.text();
    if (!res.ok) throw new Error(`uploadResource: ${res.status} ${text}`);
  }
  /** Runs `fn`, reporting wall time, the service's CPU and the bytes on both relays meanwhile. */
  async function measured<T>(fn: () => Promise<T>) {
    const [c0, f0, b0] = [cpuMs(pid), front.totals(), bucketRelay.othersThan(benchPorts)];
    const t0 = performance.now();
    const value = await fn();
    const wallMs = ms(t0);
    const [f1, b1] = [front.totals(), bucketRelay.othersThan(benchPorts)];
    return {
      value,
      wallMs,
      cpuMs: cpuMs(pid) - c0,
      socket: f1.up - f0.up + f1.down - f0.down,
      bucket: { read: b1.down - b0.down, written: b1.up - b0.up },
    };
  }

  // Warm-up (not counted): first-request costs and the engine probe of the first completion.
  const warm = join(dir, "warm.bin");
  const warmSha = await randomFile(warm, MiB);
  await direct(warm, MiB, warmSha, "warm");
  await throughService(warm, "warm2");
  const idle = await measured(() => new Promise((resolve) => setTimeout(resolve, 2000)));
  const idlePerSecond = idle.cpuMs / 2;

  console.log(`# Direct storage on Ceph RGW 16, Node (dist/node/server.mjs), ${new Date().toISOString()}`);
  console.log(`service idle CPU: ${idlePerSecond} ms/s (timers, collector), included in every figure below\n`);

  // 1. One big upload.
  if (bigBytes > 0) await oneBigUpload();
  async function oneBigUpload() {
    const big = join(dir, "big.bin");
    const bigSha = await randomFile(big, bigBytes);
    const d1 = await measured(() => direct(big, bigBytes, bigSha, "big"));
    const r1 = await measured(() => throughService(big, "big-ref"));
    console.log(`## ${mib(bigBytes)}, one upload`);
    console.log(
      "| way | wall | PUT to bucket | completeUpload | service CPU | service socket (both ways) | service↔bucket read / written |",
    );
    console.log("|---|---|---|---|---|---|---|");
    console.log(
      `| upload URL | ${d1.wallMs} ms | ${d1.value.putMs} ms | ${d1.value.completeMs} ms | ${d1.cpuMs} ms | ${mib(d1.socket)} | ${mib(d1.bucket.read)} / ${mib(d1.bucket.written)} |`,
    );
    console.log(
      `| uploadResource (reference) | ${r1.wallMs} ms | — | — | ${r1.cpuMs} ms | ${mib(r1.socket)} | ${mib(r1.bucket.read)} / ${mib(r1.bucket.written)} |`,
    );
    console.log(
      `ratios (upload URL / reference): wall ${pct(d1.wallMs, r1.wallMs)}, CPU ${pct(d1.cpuMs, r1.cpuMs)}, socket bytes ${pct(d1.socket, r1.socket)}\n`,
    );
  }

  // 2. Many concurrent uploads.
  const files = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const path = join(dir, `each-${i}.bin`);
      return { path, sha256: await randomFile(path, eachBytes) };
    }),
  );
  const monotonicUs = () => process.hrtime.bigint() / 1000n; // the clock of V8's profile timestamps
  const from = monotonicUs();
  const dN = await measured(() => Promise.all(files.map((f, i) => direct(f.path, eachBytes, f.sha256, `many-${i}`))));
  if (profileDir) console.log(`(profile window of the upload URLs: ${from}–${monotonicUs()} µs)`);
  // The reference four at a time: sixteen at once through the service outlast its request timeout
  // (408) on the 2-core machine, and its CPU per byte does not depend on how many run at once.
  const rN = await measured(async () => {
    for (let i = 0; i < files.length; i += REF_WAVE)
      await Promise.all(files.slice(i, i + REF_WAVE).map((f, j) => throughService(f.path, `many-ref-${i + j}`)));
  });
  const idleShare = (m: { wallMs: number }) => Math.round((idlePerSecond * m.wallMs) / 1000);
  console.log(`## ${count} concurrent uploads of ${mib(eachBytes)}`);
  console.log("| way | wall | service CPU | of which idle (est.) | service socket | service↔bucket read / written |");
  console.log("|---|---|---|---|---|---|");
  console.log(
    `| upload URLs | ${dN.wallMs} ms | ${dN.cpuMs} ms | ${idleShare(dN)} ms | ${mib(dN.socket)} | ${mib(dN.bucket.read)} / ${mib(dN.bucket.written)} |`,
  );
  console.log(
    `| uploadResource (reference, ${REF_WAVE} at a time) | ${rN.wallMs} ms | ${rN.cpuMs} ms | ${idleShare(rN)} ms | ${mib(rN.socket)} | ${mib(rN.bucket.read)} / ${mib(rN.bucket.written)} |`,
  );
  console.log(
    `ratio of service CPU (upload URLs / reference): ${pct(dN.cpuMs, rN.cpuMs)}; without the idle share: ${pct(dN.cpuMs - idleShare(dN), rN.cpuMs - idleShare(rN))}\n`,
  );

  // 3. Reads of one 64 MiB resource: the redirect against the streamed answer.
  const location = dN.value[0]?.location ?? "";
  const reads = 20;
  const redirects = await measured(async () => {
    for (let i = 0; i < reads; i++) {
      const res = await fetch(`${front.url}${location}`, { redirect: "manual" });
      if (res.status !== 307) throw new Error(`getData: ${res.status}, not 307`);
      await res.body?.cancel();
    }
  });
  const streamerPid = streamer.child.pid as number;
  const s0 = cpuMs(streamerPid);
  const ts = performance.now();
  const streamedReads = 4;
  for (let i = 0; i < streamedReads; i++) {
    const res = await fetch(`${streamer.url}${location}`);
    const got = createHash("sha256");
    for await (const chunk of res.body as ReadableStream<Uint8Array>) got.update(chunk);
    if (got.digest("hex") !== files[0]?.sha256) throw new Error("the streamed read is not the uploaded bytes");
  }
  const streamedCpu = (cpuMs(streamerPid) - s0) / streamedReads;
  const streamedWall = ms(ts) / streamedReads;
  const redirectCpu = redirects.cpuMs / reads;
  console.log(`## getData of ${mib(eachBytes)}`);
  console.log("| way | wall per request | service CPU per request |");
  console.log("|---|---|---|");
  console.log(
    `| 307 to the bucket (${reads} requests) | ${(redirects.wallMs / reads).toFixed(1)} ms | ${redirectCpu.toFixed(1)} ms |`,
  );
  console.log(
    `| streamed by the service (reference, ${streamedReads} requests) | ${streamedWall.toFixed(0)} ms | ${streamedCpu.toFixed(0)} ms |`,
  );
  console.log(`ratio of service CPU per request: ${pct(redirectCpu, streamedCpu)}`);
} finally {
  for (const stop of stopping.reverse()) await stop().catch(() => {});
  await rm(dir, { recursive: true, force: true });
}
