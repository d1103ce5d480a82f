/**
 * Issue 11 §4.1, crash loops: each round starts the server as shipped (a process of its own), fires
 * concurrent ingests (small inline ones, some large streamed uploads, some sharing content), kills
 * the server with SIGKILL at a random moment, restarts it on the same volume and database, and checks:
 * - every acknowledged (201) resource serves exactly its bytes;
 * - every row's blob file exists with the row's size and SHA-256, and getData serves it whole
 *   (no partial blob is ever served);
 * - no temp file of a dead process survives the restart;
 * - blobs no row references (crash leftovers) are collected once the grace period has passed;
 * - `PRAGMA integrity_check` is ok.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leftAfterCollection } from "../helpers/collected.js";
import { readdirLive } from "../helpers/live-dir.js";
import { spawnServer, type ServerProcess } from "../helpers/spawn-server.js";
import { report, scaled } from "./scale.js";

const API = "/cms/v1.0";
const TENANT = "crash";
const MiB = 1024 * 1024;
/** The fs driver's blob header: `crs-blob/1 sha256=<64 hex>\n`. */
const HEADER_LENGTH = "crs-blob/1 sha256=".length + 64 + 1;
/** Short, so crash leftovers go within the test; a create slower than this is refused (503), never lost. */
const GRACE_SECONDS = 5;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Ingest {
  name: string;
  bytes: Uint8Array;
}

function ingestRequest(base: string, { name, bytes }: Ingest): Promise<Response> {
  const fields = {
    resourceAuthor: "crasher",
    resourceMediaType: "application/octet-stream",
    resourceName: name,
    resourceTenantId: TENANT,
  };
  if (bytes.byteLength <= 64 * 1024) {
    return fetch(`${base}${API}/createResource`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...fields, resourceBinary: Buffer.from(bytes).toString("base64") }),
    });
  }
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  return fetch(`${base}${API}/uploadResource`, { method: "POST", body: form });
}

/** One round's payloads: mostly small and unique, a few large, a few repeating earlier content. */
function payloads(round: number, count: number, shared: Uint8Array): Ingest[] {
  return Array.from({ length: count }, (_, i) => {
    const roll = Math.random();
    const bytes =
      roll < 0.05
        ? randomBytes(1 * MiB + Math.floor(Math.random() * 2 * MiB))
        : roll < 0.15
          ? shared
          : randomBytes(64 + Math.floor(Math.random() * 8192));
    return { name: `r${round}-${i}.bin`, bytes };
  });
}

interface Row {
  uid: string;
  context: string;
  path: string;
  blobKey: string;
  size: number;
  sha256: string;
}

describe("crash loops: kill -9 during concurrent ingests, restart, verify (issue 11 §4.1)", () => {
  let dir: string;
  let volume: string;
  let env: Record<string, string>;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-crash-"));
    volume = join(dir, "volume");
    env = {
      CMS_VOLUME: volume,
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      CMS_GC_GRACE_SECONDS: String(GRACE_SECONDS),
      CMS_GC_INTERVAL_SECONDS: "1",
      CMS_MAX_INLINE_BYTES: String(1 * MiB),
    };
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function dbQuery<T>(sql: string): Promise<T[]> {
    const client = createClient({ url: env.CMS_DATABASE_URL as string });
    try {
      return (await client.execute(sql)).rows as unknown as T[];
    } finally {
      client.close();
    }
  }

  /** Blob files under the volume (keys), and temp upload files of every process folder. */
  async function volumeState() {
    const entries = await readdirLive(volume);
    const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(volume.length + 1));
    return {
      blobs: files.filter((f) => !f.startsWith(".")),
      temp: files.filter((f) => f.startsWith(".tmp/") && !f.endsWith("/owner")),
    };
  }

  it(
    "keeps every acknowledged ingest and every row whole across kill -9 and restart",
    async () => {
      const rounds = scaled(3, 20);
      const perRound = scaled(60, 200);
      const figures = {
        rounds,
        ingests: 0,
        acknowledged: 0,
        refused503: 0,
        killedInFlight: 0,
        rows: 0,
        violations: 0,
        orphansCollected: 0,
        tempLeftovers: 0,
      };
      const shared = randomBytes(3000);
      const acknowledged = new Map<string, { resourceURI: string; sha256: string; size: number }>();

      for (let round = 0; round < rounds; round++) {
        server = await spawnServer(env);
        const base = server.url;
        const batch = payloads(round, perRound, shared);
        figures.ingests += batch.length;
        // The kill lands mid-stream: after a random number of acknowledgements, plus a random delay.
        const killAfterAcks = Math.floor(Math.random() * batch.length * 0.8);
        let acks = 0;
        let reached: () => void = () => {};
        const killPoint = new Promise<void>((resolve) => {
          reached = resolve;
          if (killAfterAcks === 0) resolve();
        });
        const outcomes = batch.map((ingest) =>
          ingestRequest(base, ingest).then(
            async (res) => {
              const body = await res.text();
              if (res.status === 201 && ++acks >= killAfterAcks) reached();
              return { ingest, status: res.status, body };
            },
            () => ({ ingest, status: 0, body: "" }),
          ),
        );
        // If fewer creates than that succeed (503s under load), the kill waits for the batch's answers.
        await Promise.race([killPoint, Promise.all(outcomes)]);
        await sleep(Math.random() * 20);
        server.child.kill("SIGKILL");
        await new Promise((resolve) => server?.child.once("exit", resolve));
        for (const { ingest, status, body } of await Promise.all(outcomes)) {
          if (status === 201) {
            const dto = JSON.parse(body) as { resourceUID: string; resourceURI: string; sha256: string; size: number };
            expect(dto.sha256).toBe(sha256(ingest.bytes));
            acknowledged.set(dto.resourceUID, { resourceURI: dto.resourceURI, sha256: dto.sha256, size: dto.size });
            figures.acknowledged++;
          } else if (status === 0) {
            figures.killedInFlight++;
          } else if (status === 503) {
            figures.refused503++; // its reservation lapsed under load: refused, nothing acknowledged
          } else {
            expect.fail(`ingest answered ${status} before the kill: ${body}`);
          }
        }

        // Restart on the same volume and database.
        server = await spawnServer(env);
        const restarted = server.url;
        const { temp } = await volumeState();
        // Only the new process's folder may hold anything, and it has not uploaded yet.
        figures.tempLeftovers += temp.length;
        expect(temp).toEqual([]);

        const rows = await dbQuery<Row>("select uid, context, path, blob_key as blobKey, size, sha256 from resources");
        figures.rows = rows.length;
        for (const row of rows) {
          const file = await readFile(join(volume, ...row.blobKey.split("/"))).catch(() => null);
          const content = file?.subarray(HEADER_LENGTH);
          if (!content || content.byteLength !== row.size || sha256(content) !== row.sha256) figures.violations++;
        }
        // Every acknowledged resource, and every row this round wrote, serves its whole content.
        const thisRound = rows.filter((r) => r.path.startsWith(`r${round}-`));
        for (const uid of new Set([...acknowledged.keys(), ...thisRound.map((r) => r.uid)])) {
          const row = rows.find((r) => r.uid === uid);
          const expected =
            acknowledged.get(uid) ??
            (row && { resourceURI: `${row.context}/${row.path}`, sha256: row.sha256, size: row.size });
          if (!row || !expected) {
            figures.violations++;
            continue;
          }
          const res = await fetch(`${restarted}${API}/getData/${expected.resourceURI}`);
          const bytes = new Uint8Array(await res.arrayBuffer());
          if (res.status !== 200 || bytes.byteLength !== expected.size || sha256(bytes) !== expected.sha256)
            figures.violations++;
        }

        // Crash leftovers (blobs stored, rows never written) go once the grace period has passed.
        const referenced = new Set(rows.map((r) => r.blobKey));
        const orphans = async () => (await volumeState()).blobs.filter((k) => !referenced.has(k)).length;
        const orphansBefore = await orphans();
        const orphansLeft = await leftAfterCollection([server], orphans, (GRACE_SECONDS + 10) * 1000);
        figures.orphansCollected += orphansBefore - orphansLeft;
        expect(orphansLeft, "unreferenced blobs left after the grace period").toBe(0);

        const [integrity] = await dbQuery<{ integrity_check: string }>("pragma integrity_check");
        expect(integrity?.integrity_check).toBe("ok");
        await server.stop();
        server = undefined;
      }
      report("crash-loop", figures);
      expect(figures.violations).toBe(0);
      expect(figures.acknowledged).toBeGreaterThan(0);
    },
    scaled(120_000, 3_600_000),
  );
});
