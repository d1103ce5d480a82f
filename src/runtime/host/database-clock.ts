/**
 * The remote database server's clock, as this process's clock for every expiry (locks, tus uploads,
 * the collector's grace period, signed links, tokens: the app's one `clock`). Instances on several
 * machines then agree on the time even when the machines do not: a lock one takes never looks
 * expired to another, nor a fresh reservation abandoned (tested ten minutes off under libfaketime,
 * test/runtime/clock-skew.test.ts).
 *
 * How: the offset between the server's `julianday('now')` and this machine's `Date.now()`, measured
 * at start and every `refreshMs` (a machine's clock can be stepped), taken from the fastest of a few
 * round trips, so it is right within half that round trip. The expiry SQL still compares the times
 * the app passes in: one statement shape for libSQL and D1 (Workers run on Cloudflare's clock).
 */
import type { Client } from "@libsql/client";

/** Epoch milliseconds on the database server (julianday: every SQLite version, D1 and libSQL alike). */
const SERVER_NOW_SQL = "SELECT CAST(round((julianday('now') - 2440587.5) * 86400000) AS INTEGER)";
const SAMPLES = 3;

/** Server time minus local time, in ms, from the fastest of `SAMPLES` round trips. */
export async function measureClockOffset(client: Pick<Client, "execute">): Promise<number> {
  let best = { roundTrip: Number.POSITIVE_INFINITY, offset: 0 };
  for (let i = 0; i < SAMPLES; i++) {
    const sent = Date.now();
    const { rows } = await client.execute(SERVER_NOW_SQL);
    const received = Date.now();
    const serverNow = Number(rows[0]?.[0]);
    if (!Number.isFinite(serverNow)) throw new Error("the database did not tell its time");
    if (received - sent < best.roundTrip)
      best = { roundTrip: received - sent, offset: Math.round(serverNow - (sent + received) / 2) };
  }
  return best.offset;
}

export interface DatabaseClock {
  /** Now, on the database server's clock. */
  clock: () => Date;
  offsetMs(): number;
  stop(): void;
}

/** Measures once before it resolves (a failure rejects: the database is unusable), then every `refreshMs`. */
export async function databaseClock(
  client: Pick<Client, "execute">,
  { refreshMs = 60_000, onOffset }: { refreshMs?: number; onOffset?: (offsetMs: number) => void } = {},
): Promise<DatabaseClock> {
  let offset = await measureClockOffset(client);
  onOffset?.(offset);
  const timer = setInterval(() => {
    measureClockOffset(client).then(
      (measured) => {
        offset = measured;
      },
      // An unreachable database keeps the last offset; the requests that need it fail on their own.
      () => {},
    );
  }, refreshMs);
  timer.unref();
  return { clock: () => new Date(Date.now() + offset), offsetMs: () => offset, stop: () => clearInterval(timer) };
}
