/**
 * Issue 36's guard that cannot race the clock: for each request kind, the database statements and
 * blob-store calls one request makes, counted over a batch on the real app served over a socket as
 * the Node entry serves it (its fast path included), against test/budget/work-budget.json. A
 * planted extra lookup or write fails it with the statements listed.
 *
 * Statements are counted in the `libsql` driver both of the app's connections go through (the
 * @libsql/client file client and the prepared lookup): every execution of a prepared statement and
 * every `exec`, with its SQL. Blob-store calls are counted on `deps.blobs`, the store the routes and
 * the fast path ask. Slack: a batch may exceed budget × requests by 2 of each, for a timer that
 * runs beside requests (the blob collector) and may fire during a batch; the webhook outbox's
 * once-a-second poll is slowed to once an hour for this.
 */
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrigin, type Origin } from "../helpers/origin.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { BUDGET, type Counted, overBudget, printOnly, report, SERVICE_ENV } from "./budget.js";
import { type Kind, prepareKinds, sendOne } from "./request-kinds.js";

type Fn = (...args: unknown[]) => unknown;

/** Counts statement executions through the libsql driver until `restore()`; `take()` returns and clears them. */
function countStatements() {
  const probe = new Database(":memory:");
  const statementPrototype = Object.getPrototypeOf(probe.prepare("select 1")) as Record<string, Fn>;
  probe.close();
  const databasePrototype = Database.prototype as unknown as Record<string, Fn>;
  const sqlOf = new WeakMap<object, string>();
  let executed: string[] = [];
  const originals: [Record<string, Fn>, string, Fn][] = [];
  const wrap = (
    target: Record<string, Fn>,
    name: string,
    around: (self: object, args: unknown[], original: Fn) => unknown,
  ) => {
    const original = target[name] as Fn;
    originals.push([target, name, original]);
    target[name] = function (this: object, ...args: unknown[]) {
      return around(this, args, original);
    };
  };
  wrap(databasePrototype, "prepare", (self, args, original) => {
    const statement = original.apply(self, args) as object;
    sqlOf.set(statement, String(args[0]));
    return statement;
  });
  wrap(databasePrototype, "exec", (self, args, original) => {
    executed.push(String(args[0]));
    return original.apply(self, args);
  });
  // One execution is one count: the driver's `all` runs its own `iterate`.
  let depth = 0;
  for (const name of ["run", "get", "all", "iterate"])
    wrap(statementPrototype, name, (self, args, original) => {
      if (depth === 0) executed.push(sqlOf.get(self) ?? "(a statement prepared before counting began)");
      depth++;
      try {
        return original.apply(self, args);
      } finally {
        depth--;
      }
    });
  return {
    take() {
      const taken = executed;
      executed = [];
      return taken;
    },
    restore() {
      for (const [target, name, original] of originals.reverse()) target[name] = original;
    },
  };
}

/** Counts calls of every method of `store` (own and inherited), by name. */
function countCalls(store: object) {
  let calls: string[] = [];
  const names = new Set<string>();
  for (let o: object | null = store; o && o !== Object.prototype; o = Object.getPrototypeOf(o))
    for (const name of Object.getOwnPropertyNames(o)) {
      const descriptor = Object.getOwnPropertyDescriptor(o, name);
      if (name !== "constructor" && typeof descriptor?.value === "function") names.add(name);
    }
  const target = store as Record<string, Fn>;
  for (const name of names) {
    const original = target[name] as Fn;
    target[name] = function (this: unknown, ...args: unknown[]) {
      calls.push(name);
      return original.apply(this, args);
    };
  }
  return {
    take() {
      const taken = calls;
      calls = [];
      return taken;
    },
  };
}

const tally = (items: string[]) => {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts]
    .map(([item, n]) => `  ${String(n).padStart(4)} × ${item.replace(/\s+/g, " ").slice(0, 160)}`)
    .join("\n");
};

let origin: Origin;
let app: TestApp;
let statements: ReturnType<typeof countStatements>;
let kinds: Kind[];

beforeAll(async () => {
  statements = countStatements();
  origin = await startOrigin();
  app = await startTestApp(SERVICE_ENV);
  kinds = await prepareKinds(app.baseUrl, origin);
});

afterAll(async () => {
  statements?.restore();
  await app?.close();
  await origin?.close();
});

describe("work budget: statements and blob-store calls per request (issue 36)", () => {
  it("every request kind stays within its budget", async () => {
    const blobs = countCalls(app.deps.blobs);
    const counted = { statements: [] as Counted[], storage: [] as Counted[] };
    for (const kind of kinds) {
      // Warm-up: the row and blob caches filled, a derivative made and stored, as in steady serving.
      for (let i = 0; i < 3; i++) await sendOne(app.baseUrl, kind);
      statements.take();
      blobs.take();
      for (let i = 0; i < BUDGET.requests; i++) await sendOne(app.baseUrl, kind);
      const ran = statements.take();
      const asked = blobs.take();
      counted.statements.push({ kind: kind.name, total: ran.length, detail: tally(ran) });
      counted.storage.push({ kind: kind.name, total: asked.length, detail: tally(asked) });
    }
    report("statements", counted.statements);
    report("blob-store calls", counted.storage);
    if (printOnly) return;
    const failures = [
      overBudget(
        "statements",
        counted.statements,
        BUDGET.statements.perRequest,
        (b) => b * BUDGET.requests + BUDGET.statements.slack,
      ),
      overBudget(
        "blob-store calls",
        counted.storage,
        BUDGET.storage.perRequest,
        (b) => b * BUDGET.requests + BUDGET.storage.slack,
      ),
    ].filter(Boolean);
    expect(failures.join("\n\n"), "over the work budget (test/budget/work-budget.json)").toBe("");
  });
});
