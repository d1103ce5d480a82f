/**
 * CMS_WORKERS=2 on Node (node:cluster): the server as shipped, on a real libSQL file and volume.
 * Every request goes over a fresh connection, which the primary hands to the workers in turn; the
 * access log's `worker` field tells which one answered, so each check is made through both workers.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePromText, type Scrape } from "../helpers/prom-text.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WORKERS = 2;

interface Answer {
  status: number;
  body: string;
  worker: number;
}
type LogLine = { msg?: string; worker?: number; requestId?: string; signal?: string; pid?: number };

let dir: string;
let server: ServerProcess;
let sent = 0;

const lines = () => server.stdout.map((l) => JSON.parse(l) as LogLine);
const listening = () => lines().filter((l) => l.msg === "listening");

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One request on a connection of its own; which worker answered is read from its access-log line. */
async function request(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const requestId = `workers-test-${++sent}`;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(`${server.url}${path}`, {
      method,
      agent: false,
      headers: { "x-request-id": requestId, ...(payload ? { "content-type": "application/json" } : {}), ...headers },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(payload);
  });
  const line = await until(`the access log line of ${requestId}`, () =>
    lines().find((l) => l.msg === "request" && l.requestId === requestId),
  );
  return { status, body: text, worker: line.worker as number };
}

/** The same request until every worker has answered it at least once. */
async function throughEveryWorker(method: string, path: string, body?: unknown): Promise<Answer[]> {
  const answers: Answer[] = [];
  while (new Set(answers.map((a) => a.worker)).size < WORKERS) {
    if (answers.length >= 12) throw new Error(`only workers ${[...new Set(answers.map((a) => a.worker))]} answered`);
    answers.push(await request(method, path, body));
  }
  return answers;
}

const post = (verb: string, body: unknown) => request("POST", `/cms/v1.0/${verb}`, body);

async function create(name: string, text: string) {
  const res = await post("createResource", {
    resourceAuthor: "Author",
    resourceBinary: Buffer.from(text).toString("base64"),
    resourceMediaType: "text/plain",
    resourceName: name,
    resourceTenantId: "workers",
  });
  expect(res.status, res.body).toBe(201);
  return JSON.parse(res.body) as { resourceUID: string; resourceURI: string };
}

/** The primary's worker processes (children), from /proc. */
async function workerPids(): Promise<number[]> {
  const pid = server.child.pid as number;
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8");
  return children.trim().split(/\s+/).filter(Boolean).map(Number);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-workers-"));
  // A fresh database: the primary migrates it once before forking.
  server = await spawnServer({
    CMS_WORKERS: String(WORKERS),
    CMS_VOLUME: join(dir, "volume"),
    CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
    CMS_METRICS_ENABLED: "true",
    CMS_INSTANCE_ID: "workers-test",
  });
  await until("both workers listening", () => (listening().length >= WORKERS ? true : undefined));
});
afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("CMS_WORKERS=2 (node:cluster)", () => {
  it("starts two workers on one port, each logging its own listening line", () => {
    expect(new Set(listening().map((l) => l.worker))).toEqual(new Set([1, 2]));
    expect(new Set(listening().map((l) => (l as { url?: string }).url))).toEqual(new Set([server.url]));
  });

  it("a write through one worker is read through every worker at once: create, then purge", async () => {
    const { resourceUID, resourceURI } = await create("seen.txt", "written once");
    for (const answer of await throughEveryWorker("GET", `/cms/v1.0/getData/${resourceURI}`)) {
      expect(answer).toMatchObject({ status: 200, body: "written once" });
    }
    // Both workers now hold the row and the blob in their caches; purge through one of them.
    const purged = await post("purgeResource", { resourceUID });
    expect(purged.status, purged.body).toBe(200);
    for (const answer of await throughEveryWorker("GET", `/cms/v1.0/getData/${resourceURI}`)) {
      expect(answer.status, `worker ${answer.worker} still serves purged content`).toBe(404);
      expect(answer.body).not.toContain("written once");
    }
  });

  it("a lock taken through one worker is refused through every worker", async () => {
    const { resourceUID } = await create("locked.txt", "locked");
    const taken = await post("lockResourceDTO", { resourceUID, author: "alice" });
    expect(taken.status, taken.body).toBe(200);
    for (const answer of await throughEveryWorker("POST", "/cms/v1.0/lockResourceDTO", {
      resourceUID,
      author: "bob",
    })) {
      expect(answer.status, `worker ${answer.worker}`).toBe(423);
      expect(JSON.parse(answer.body)).toMatchObject({ code: "LOCKED" });
    }
  });

  it("GET /metrics through either worker counts every worker's requests, and database gauges once", async () => {
    const scrapes = async () => (await throughEveryWorker("GET", "/metrics")).map((a) => parsePromText(a.body));
    const apiversion = (s: Scrape) => s.value("cms_http_requests_total", { route: "/apiversion", status: "200" });
    const before = await scrapes();
    expect(new Set(before.map(apiversion)).size).toBe(1); // either worker: the same figure
    const answers = await Promise.all(Array.from({ length: 40 }, () => request("GET", "/apiversion")));
    expect(new Set(answers.map((a) => a.worker))).toEqual(new Set([1, 2]));
    const upload = await request("POST", "/cms/v1.0/uploads", undefined, {
      "tus-resumable": "1.0.0",
      "upload-length": "10",
      "upload-metadata": `tenant ${btoa("workers")},filename ${btoa("a.txt")},author ${btoa("T")}`,
    });
    expect(upload.status, upload.body).toBe(201);
    const after = await scrapes();
    for (const scrape of after) {
      expect(apiversion(scrape) - apiversion(before[0] as Scrape)).toBe(40);
      // Read from the one database by each worker, counted once; one instance id, once.
      expect(scrape.value("cms_tus_pending_uploads")).toBe(1);
      expect(scrape.find("cms_instance_info")).toEqual([
        { name: "cms_instance_info", labels: { id: "workers-test" }, value: 1 },
      ]);
      // Both processes' memory, added up.
      expect(scrape.value("process_resident_memory_bytes")).toBeGreaterThan(0);
    }
  });

  it("writes exactly one whole access-log line per request, also under concurrent load", async () => {
    const before = sent;
    const answers = await Promise.all(Array.from({ length: 200 }, () => request("GET", "/apiversion")));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.worker))).toEqual(new Set([1, 2]));
    const ids = lines()
      .filter((l) => l.msg === "request")
      .map((l) => l.requestId);
    expect(ids.length).toBe(sent);
    expect(new Set(ids).size).toBe(sent);
    expect(sent - before).toBe(200);
  });

  it("replaces a worker that dies, logs it, and keeps serving through both slots", async () => {
    const [victim] = await workerPids();
    process.kill(victim as number, "SIGKILL");
    const exited = await until("the replacement log line", () =>
      lines().find((l) => l.msg === "worker exited; starting a replacement"),
    );
    expect(exited).toMatchObject({ pid: victim, signal: "SIGKILL" });
    await until("the replacement listening", () => (listening().length > WORKERS ? true : undefined));
    const pids = await workerPids();
    expect(pids).toHaveLength(WORKERS);
    expect(pids).not.toContain(victim);
    for (const answer of await throughEveryWorker("GET", "/apiversion")) expect(answer.status).toBe(200);
  });

  it("stops every worker gracefully on SIGTERM, then exits 0 with every access-log line written", async () => {
    const pids = await workerPids();
    expect(await server.stop()).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0), `worker ${pid} still alive`).toThrow();
    expect(lines().filter((l) => l.msg === "stopping" && l.worker !== undefined)).toHaveLength(WORKERS);
    expect(lines().filter((l) => l.msg === "request")).toHaveLength(sent);
  });
});

describe("CMS_WORKERS on Bun", () => {
  it("is refused at start-up with a configuration error naming the setting", async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(join(ROOT, "node_modules", ".bin", "bun"), ["src/bun.ts"], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? "",
          CMS_WORKERS: "2",
          CMS_PORT: "0",
          CMS_VOLUME: join(tmpdir(), "cms-unused"),
          CMS_DATABASE_URL: ":memory:",
        },
        timeout: 20_000,
      });
      let stderr = "";
      child.stderr?.on("data", (d) => (stderr += d));
      child.on("exit", (code) => resolve({ code, stderr }));
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^invalid configuration: CMS_WORKERS must be 1 on Bun/);
  });
});
