/**
 * Two server processes (the shipped Node server) on one database — a libSQL file, then a real sqld —
 * sharing its outbox, with one receiver on 127.0.0.1 that `standardwebhooks` verifies:
 * - events written through both instances are each delivered exactly once (one claim each: no
 *   duplicate webhook-id), in order per resource, and both instances deliver;
 * - an instance SIGKILLed while its delivery hangs at the receiver loses its claim only when the
 *   lease ends: then the other sends the same webhook-id, and the resource's next event after it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API } from "../helpers/cms-client.js";
import { processClient } from "../helpers/process-client.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { type Sqld, startSqld } from "../helpers/sqld.js";
import { eventually, type Receiver, startReceiver } from "./receiver.js";

/**
 * Long enough that only the SIGKILL ends the held attempt, however loaded the machine: an attempt that
 * timed out first would be recorded as a retry by the victim, and nothing would be taken over.
 */
const TIMEOUT_MS = 4_000;
/** The deliverer's lease on a claim (services/webhook-deliverer.ts): 2 × timeout + 1 s. */
const LEASE_MS = 2 * TIMEOUT_MS + 1_000;

interface Database {
  url: string;
  close(): Promise<void>;
}
const databases: [string, (dir: string) => Promise<Database>][] = [
  ["one libSQL file", async (dir) => ({ url: `file:${join(dir, "cms.db")}`, close: async () => {} })],
  [
    "one sqld",
    async () => {
      const sqld: Sqld = await startSqld();
      return { url: sqld.url, close: () => sqld.close() };
    },
  ],
];

// The two databases' suites run at once (each its own servers, receiver and folder): most of each
// is waiting, for the lease to end or the deliverer's polls. Within a suite, tests run in turn.
describe.concurrent.each(databases)("two instances sharing the outbox on %s", (label, openDatabase) => {
  let dir: string;
  let database: Database;
  let receiver: Receiver;
  let servers: ServerProcess[] = [];
  let secret: string;
  let subscriptionId: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-shared-outbox-"));
    [database, receiver] = await Promise.all([openDatabase(dir), startReceiver()]);
    const env = {
      CMS_VOLUME: join(dir, "volume"),
      CMS_DATABASE_URL: database.url,
      CMS_FETCH_ALLOW_PRIVATE: "true", // the receiver is on 127.0.0.1
      CMS_LINK_SECRET: "a-link-secret-shared-by-every-instance!",
      // Each pass's figures ("webhooks delivered": who delivered how many) and each attempt's start
      // ("webhook delivery attempt": which instance sends a webhook-id).
      CMS_LOG_LEVEL: "debug",
      CMS_WEBHOOK_POLL_MS: "20",
      CMS_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    };
    servers = await Promise.all([spawnServer(env), spawnServer(env)]);
    const res = await fetch(`${servers[0]?.url}${API}/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(res.status).toBe(201);
    ({ secret, id: subscriptionId } = (await res.json()) as { secret: string; id: string });
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
    for (const server of servers)
      if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    await database?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Deliveries each instance reports (its debug log of every pass that did something). */
  const deliveredBy = (server: ServerProcess) =>
    server.stdout
      .map((line) => JSON.parse(line) as { msg?: string; delivered?: number })
      .filter((l) => l.msg === "webhooks delivered")
      .reduce((sum, l) => sum + (l.delivered ?? 0), 0);

  it.sequential("delivers each event once, in order per resource, from both instances", {
    timeout: 60_000,
  }, async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    // Four resources, each changed seven times, every change through the other instance than the last.
    const changes = await Promise.all(
      [0, 1, 2, 3].map(async (r) => {
        const on = (i: number) => processClient(i % 2 === 0 ? a : b, "shared");
        const { resourceUID } = await on(r).create({ resourceName: `r${r}.txt` }, `resource ${r}`);
        for (let round = 0; round < 2; round++) {
          const lock = await on(r + 1).lock(resourceUID);
          const held = { resourceUID, author: "Author", lockID: lock.lockID };
          expect((await on(r).post("updateResource", { ...held, resourceAuthor: `B${round}` })).status).toBe(200);
          expect((await on(r + 1).post("unlockResourceDTO", held)).status).toBe(204);
        }
        return resourceUID;
      }),
    );
    const total = changes.length * 7;
    await receiver.waitFor(total);
    // Every delivery recorded delivered, and sent exactly once per attempt it records: a second claim
    // while one is live would send without recording (its completion is refused), so it shows here.
    // (A retry after a timeout under load is a recorded attempt, and allowed.)
    const recorded = await eventually(async () => {
      const res = await fetch(`${a.url}${API}/webhooks/${subscriptionId}/deliveries?limit=1000`);
      const rows = ((await res.json()) as { deliveries: { id: string; status: string; attempts: number }[] })
        .deliveries;
      return rows.length === total && rows.every((d) => d.status === "delivered") ? rows : undefined;
    });
    const events = receiver.verified(secret);
    const sent = new Map<string, number>();
    for (const e of events) sent.set(e.id, (sent.get(e.id) ?? 0) + 1);
    const perAttempt = recorded.map((d) => `${d.id} ${d.attempts}`);
    const diagnosis = JSON.stringify(
      receiver.received
        .filter((r) => (sent.get(r.headers["webhook-id"] as string) ?? 0) > 1)
        .map((r) => [r.headers["webhook-id"], r.remotePort, r.at]),
    );
    expect(
      recorded.map((d) => `${d.id} ${sent.get(d.id)}`),
      diagnosis,
    ).toEqual(perAttempt);
    expect(sent.size).toBe(total);
    for (const uid of changes) {
      // In order per resource: each event's first arrival (a retry repeats one in place).
      const firsts = new Map(events.filter((e) => e.event.data.resourceUID === uid).map((e) => [e.id, e.event]));
      expect([...firsts.values()].map((e) => `${e.type}@${e.data.revision}`)).toEqual([
        "resource.created@1",
        "resource.locked@1",
        "resource.updated@2",
        "resource.unlocked@2",
        "resource.locked@2",
        "resource.updated@3",
        "resource.unlocked@3",
      ]);
    }
    const split = await eventually(async () => {
      const [x, y] = [deliveredBy(a), deliveredBy(b)];
      return x + y >= total ? [x, y] : undefined;
    });
    expect(split.every((n) => n > 0)).toBe(true);
    console.log(
      `shared outbox (${label}): ${total} events in ${events.length} requests, delivered ${split.join(" + ")} by the two instances`,
    );
  });

  it.sequential("takes over a killed instance's claim when its lease ends, then delivers the resource's next event", {
    timeout: 60_000,
  }, async () => {
    const before = receiver.received.length;
    receiver.hold = true; // the receiver hangs until released: only the kill ends the attempt
    const [a] = servers as [ServerProcess, ServerProcess];
    const client = processClient(a, "shared");
    const { resourceUID } = await client.create({ resourceName: "killed.txt" }, "killed mid-delivery");
    await client.lock(resourceUID); // its event must wait for the created one
    await receiver.waitFor(before + 1);
    const first = receiver.received[before];
    // The sender: the instance whose log says it started this webhook-id's attempt.
    const heldId = first?.headers["webhook-id"];
    const { victim, claimedUntil } = await Promise.any(
      servers.map(async (s) => {
        const line = await s.waitForLine((l) => l.msg === "webhook delivery attempt" && l.id === heldId);
        return { victim: s, claimedUntil: Number(line.claimedUntil) };
      }),
    );
    const survivor = servers.find((s) => s !== victim) as ServerProcess;
    victim.child.kill("SIGKILL");
    await new Promise((resolve) => victim.child.once("exit", resolve));
    receiver.hold = false;
    receiver.release();

    await receiver.waitFor(before + 3, 30_000);
    const [held, again, next] = receiver.verified(secret).slice(before);
    // The same event, the same webhook-id (receivers drop the duplicate), not before the lease ended.
    expect(again?.id).toBe(held?.id);
    expect(again?.event).toEqual(held?.event);
    expect(held?.event).toMatchObject({ type: "resource.created", data: { resourceUID } });
    // Not before the victim's lease ended (the clock of this machine, which every process reads): the
    // lease, not the receiver's first arrival, is the bound (under load that arrival came ≥ 1 s after the claim).
    const retriedAt = receiver.received[before + 1]?.at ?? 0;
    expect(claimedUntil).toBeGreaterThan(first?.at ?? 0); // the attempt line names its lease
    expect(retriedAt).toBeGreaterThanOrEqual(claimedUntil);
    const waited = retriedAt - (first?.at ?? 0);
    console.log(
      `shared outbox (${label}): the killed instance's claim taken over after ${waited} ms (lease ${LEASE_MS} ms)`,
    );
    expect(next?.event).toMatchObject({ type: "resource.locked", data: { resourceUID } });
    expect(receiver.received).toHaveLength(before + 3);
    // The survivor recorded both; the victim's attempt, never finished, is not counted.
    const res = await fetch(`${survivor.url}${API}/webhooks/${subscriptionId}/deliveries`);
    const { deliveries } = (await res.json()) as { deliveries: { id: string; status: string; attempts: number }[] };
    expect(deliveries.slice(0, 2)).toEqual([
      expect.objectContaining({ id: next?.id, status: "delivered", attempts: 1 }),
      expect.objectContaining({ id: held?.id, status: "delivered", attempts: 1 }),
    ]);
  });
});
