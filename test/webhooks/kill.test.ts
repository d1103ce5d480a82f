/**
 * The outbox under kill -9: the shipped server (dist/node/server.mjs) takes a stream of creates while
 * the receiver is down, is SIGKILLed mid-stream, restarts on the same database and volume; then the
 * receiver comes up and gets exactly one verified event per resource row (every create that got 201
 * among them, and none for a create that did not commit), each signed as standardwebhooks checks.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, expect, it } from "vitest";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { eventually, type Receiver, startReceiver } from "./receiver.js";

const API = "/cms/v1.0";
let dir: string;
const running: ServerProcess[] = [];
let receiver: Receiver | undefined;
afterAll(async () => {
  await receiver?.close();
  for (const server of running) if (server.child.exitCode === null) await server.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const create = (url: string, i: number) =>
  fetch(`${url}${API}/createResource`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      resourceAuthor: "A",
      resourceMediaType: "text/plain",
      resourceName: `n${i}.txt`,
      resourceTenantId: "acme",
      resourceBinary: btoa(`content ${i}`),
    }),
  }).then(
    async (res) => (res.status === 201 ? ((await res.json()) as { resourceUID: string }).resourceUID : null),
    () => null, // the connection died with the server
  );

it("delivers every committed create's event, signed, after a SIGKILL mid-stream of 20 creates", {
  timeout: 120_000,
}, async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-webhook-kill-"));
  const dbFile = join(dir, "cms.db");
  const env = {
    CMS_VOLUME: join(dir, "volume"),
    CMS_DATABASE_URL: `file:${dbFile}`,
    CMS_FETCH_ALLOW_PRIVATE: "true", // the receiver is on 127.0.0.1
    CMS_WEBHOOK_POLL_MS: "50",
    CMS_WEBHOOK_RETRY_BASE_MS: "20",
    CMS_WEBHOOK_MAX_ATTEMPTS: "100",
    CMS_WEBHOOK_TIMEOUT_MS: "1000",
  };
  receiver = await startReceiver();
  receiver.down = true; // it cuts every connection until it comes up below
  const first = await spawnServer(env);
  running.push(first);
  const subscribed = await fetch(`${first.url}${API}/webhooks`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url }),
  });
  expect(subscribed.status).toBe(201);
  const { secret } = (await subscribed.json()) as { secret: string };

  // 20 creates, four at a time; SIGKILL once 10 have answered 201, with the others in flight.
  const ok: string[] = [];
  let next = 0;
  let killed = false;
  const worker = async () => {
    while (next < 20) {
      const i = next++;
      const uid = await create(first.url, i);
      if (uid) ok.push(uid);
      if (ok.length >= 10 && !killed) {
        killed = true;
        first.child.kill("SIGKILL");
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  expect(killed).toBe(true);
  expect(ok.length).toBeLessThan(20);

  const second = await spawnServer(env);
  running.push(second);
  // The rest of the 20 on the restarted server.
  for (let i = 20; ok.length < 20; i++) {
    const uid = await create(second.url, i);
    expect(uid).not.toBeNull();
    ok.push(uid as string);
  }
  receiver.down = false;
  const db = createClient({ url: `file:${dbFile}` });
  const rows = (await db.execute("select uid from resources")).rows.map((r) => String(r.uid));
  db.close();
  expect(rows).toEqual(expect.arrayContaining(ok));

  await receiver.waitFor(rows.length, 60_000);
  await eventually(async () => (receiver?.received.length === rows.length ? true : undefined));
  const events = receiver.verified(secret);
  const uids = events.map((e) => e.event.data.resourceUID as string);
  // At least once: a duplicate would carry the same webhook-id; here each row's event came once.
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  expect(uids.sort()).toEqual([...rows].sort());
  expect(events.every((e) => e.event.type === "resource.created")).toBe(true);
  console.log(`kill test: ${ok.length} creates answered 201, ${rows.length} rows, ${events.length} events verified`);
});
