/**
 * Every npm script that starts a server stops with it: SIGINT (Ctrl-C) or SIGTERM sent to the npm
 * process the user started leaves no process below it and nothing accepting on the port the script
 * printed. npm passes the signal to its `sh -c`; sh does not pass it on to a child it waits for, so
 * the server must replace sh (`exec`) rather than run under it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { accepts, runNpmScript, stillRunning } from "../helpers/npm-script.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-npm-signals-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const LISTENING = /"msg":"listening".*?"url":"(http:\/\/[^"]+)"/;
const serverEnv = (name: string) => ({
  CMS_HOST: "127.0.0.1",
  CMS_PORT: "0",
  CMS_VOLUME: join(dir, name, "volume"),
  CMS_DATABASE_URL: `file:${join(dir, name, "cms.db")}`,
});

interface ScriptCase {
  script: string;
  env: (name: string) => Record<string, string>;
  args?: (name: string) => string[];
  readyPattern: RegExp;
  /** A server's: it answers a request that reads its database (migrated before it serves). */
  database?: true;
  /**
   * Its two cases one after the other: `npm start` rebuilds dist/, and two `wrangler dev` bind the
   * same inspector port (127.0.0.1:9229: the second exits, seen in a loaded full run).
   */
  oneAtATime?: true;
}

const SCRIPTS: ScriptCase[] = [
  { script: "start", env: serverEnv, readyPattern: LISTENING, database: true, oneAtATime: true },
  { script: "start:bun", env: serverEnv, readyPattern: LISTENING, database: true },
  { script: "idp", env: () => ({ CMS_IDP_PORT: "0" }), readyPattern: /^issuer:\s+(\S+)$/m },
  {
    script: "dev:worker",
    env: () => ({}),
    // Any free port, and the local R2/D1 state in the test's folder, not in the repository's
    // .wrangler/: the D1 there is the one the script migrates (scripts/dev-worker.sh).
    args: (name) => ["--port", "0", "--persist-to", join(dir, name, "wrangler")],
    readyPattern: /Ready on (http:\/\/\S+)/,
    database: true,
    oneAtATime: true,
  },
];

/**
 * Every case starts at once (each waits mostly on its own start-up: wrangler's alone is ~20 s, most
 * of it not CPU), but `oneAtATime` scripts' two cases in turn.
 */
const turns = new Map<string, Promise<unknown>>();
function inTurn(script: string, run: () => Promise<void>): Promise<void> {
  if (!SCRIPTS.find((c) => c.script === script)?.oneAtATime) return run();
  const mine = (turns.get(script) ?? Promise.resolve()).then(run);
  const settled = mine.catch(() => undefined); // the next case runs whether this one passed or not
  turns.set(script, settled);
  return mine;
}

describe.concurrent.each(SCRIPTS)("npm run $script", ({ script, env, args, readyPattern, database }) => {
  it.for(["SIGINT", "SIGTERM"] as const)(
    "%s to npm leaves no process and no bound port",
    { timeout: 240_000 }, // its own run and, before it, the other signal's run of the same script
    // The test's own expect: a concurrent test's assertions (expect.poll) must name their test.
    (signal, { expect }) =>
      inTurn(script, async () => {
        const name = `${script.replace(/\W/g, "-")}-${signal}`;
        const run = runNpmScript(script, { env: env(name), args: args?.(name), readyPattern });
        try {
          const url = await run.ready;
          expect(await accepts(url)).toBe(true);
          if (database) {
            const list = await fetch(new URL("/cms/v1.0/listResources?resourceTenantId=signals", url));
            expect(list.status, await list.text()).toBe(200);
          }
          const pids = await run.tree();
          expect(pids.length).toBeGreaterThan(1); // npm and at least the server
          run.npm.kill(signal);
          await run.exited;
          await expect.poll(() => stillRunning(pids), { timeout: 10_000, interval: 100 }).toEqual([]);
          expect(await accepts(url)).toBe(false);
        } finally {
          run.killGroup();
        }
      }),
  );
});
