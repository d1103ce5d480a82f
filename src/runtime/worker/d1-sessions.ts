/**
 * D1 through the Sessions API (issue 28 §4): each request's queries run in one D1 session, so D1
 * may answer reads from a replica while every query of a request sees at least what the one before
 * it saw. A request that writes starts on the primary (`first-primary`); other requests start
 * anywhere (`first-unconstrained`) unless they send the bookmark of an earlier answer
 * (`X-D1-Bookmark`, on every answer that queried D1): then they start from it, so a writer reads
 * its own writes on any replica and any isolate. Outside a request (the cron) queries go to the
 * binding itself, the primary.
 */
// biome-ignore lint/correctness/noNodejsModules: workerd has it under the nodejs_als flag (wrangler.toml); Workers only.
import { AsyncLocalStorage } from "node:async_hooks";
import { ProblemError } from "../../problems.js";

export const BOOKMARK_HEADER = "x-d1-bookmark";
const EXPOSE = "access-control-expose-headers";
/** A D1 bookmark: dash-separated hex groups (an opaque, ordered token; this shape guards the binding from other input). */
const BOOKMARK = /^[0-9a-f]+(?:-[0-9a-f]+){1,7}$/i;
const MAX_BOOKMARK = 256;

/** The part of a D1 database (or of one of its sessions) drizzle's D1 driver calls. */
interface D1Queries {
  prepare(sql: string): unknown;
  batch(statements: unknown[]): Promise<unknown[]>;
}
interface D1Session extends D1Queries {
  getBookmark(): string | null;
}
interface D1Binding extends D1Queries {
  withSession(constraintOrBookmark?: string): D1Session;
  exec(sql: string): Promise<unknown>;
}

type Statement = {
  bind(...params: unknown[]): Statement;
  all(): Promise<unknown>;
  run(): Promise<unknown>;
  raw(): Promise<unknown>;
  first(column?: string): Promise<unknown>;
};

/** What drizzle's D1 driver calls on a statement, prepared in `session()` only when it runs. */
class LateStatement {
  constructor(
    private readonly session: () => D1Queries,
    private readonly sql: string,
    private readonly params: unknown[],
  ) {}
  bind(...params: unknown[]) {
    return new LateStatement(this.session, this.sql, params);
  }
  /** This statement prepared in `session`. */
  in(session: D1Queries): Statement {
    return (session.prepare(this.sql) as Statement).bind(...this.params);
  }
  all() {
    return this.in(this.session()).all();
  }
  run() {
    return this.in(this.session()).run();
  }
  raw(options?: unknown) {
    return (this.in(this.session()).raw as (o?: unknown) => Promise<unknown>)(options);
  }
  first(column?: string) {
    return this.in(this.session()).first(column);
  }
}

/** A request's session, opened at its first query: an answer from the colo's cache opens none. */
interface LazySession {
  constraint: string;
  session?: D1Session;
}

const isBinding = (db: unknown): db is D1Binding =>
  typeof (db as Partial<D1Binding> | null)?.withSession === "function";

/**
 * What drizzle is given instead of the binding: each call goes to the running request's session.
 * A class, so drizzle takes it for a client (it reads a plain object as its config).
 */
class SessionRouter implements D1Queries {
  constructor(
    private readonly db: D1Binding,
    private readonly current: AsyncLocalStorage<LazySession>,
  ) {}
  private get session(): D1Queries {
    const lazy = this.current.getStore();
    if (!lazy) return this.db;
    lazy.session ??= this.db.withSession(lazy.constraint);
    return lazy.session;
  }
  /** A statement bound to no session: it is prepared in the running request's when it runs (drizzle prepares some once, at start). */
  prepare(sql: string) {
    return new LateStatement(() => this.session, sql, []);
  }
  batch(statements: unknown[]) {
    const session = this.session;
    return session.batch(statements.map((s) => (s instanceof LateStatement ? s.in(session) : s)));
  }
  exec(sql: string) {
    return this.db.exec(sql);
  }
}

export interface D1Sessions {
  /** For drizzle's D1 driver. */
  client: object;
  /** `answer` with its queries in a session for `request`; the answer carries the session's bookmark. */
  run(request: Request, answer: () => Promise<Response>): Promise<Response>;
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The session `request` starts with; 400 naming the header when its bookmark is malformed. */
function constraintOf(request: Request): string {
  const bookmark = request.headers.get(BOOKMARK_HEADER)?.trim();
  if (bookmark) {
    if (bookmark.length <= MAX_BOOKMARK && BOOKMARK.test(bookmark)) return bookmark;
    const detail = "must be the X-D1-Bookmark of an earlier answer";
    throw new ProblemError("VALIDATION_FAILED", `invalid header: ${BOOKMARK_HEADER} ${detail}`, {
      errors: [{ pointer: `/header/${BOOKMARK_HEADER}`, detail }],
    });
  }
  return READS.has(request.method) ? "first-unconstrained" : "first-primary";
}

const sessionsOf = new WeakMap<object, D1Sessions>();

/** The sessions of the D1 binding `db` (one per binding, so the app and the entry share them); undefined if it has none. */
export function d1Sessions(db: unknown): D1Sessions | undefined {
  if (!isBinding(db)) return undefined;
  let sessions = sessionsOf.get(db);
  if (!sessions) {
    const current = new AsyncLocalStorage<LazySession>();
    sessions = {
      client: new SessionRouter(db, current),
      async run(request, answer) {
        const lazy: LazySession = { constraint: constraintOf(request) };
        const response = await current.run(lazy, answer);
        const bookmark = lazy.session?.getBookmark();
        if (!bookmark) return response;
        // A copy: answers from the colo's cache (and fetch's) have immutable headers.
        const sent = new Response(response.body, response);
        sent.headers.set(BOOKMARK_HEADER, bookmark);
        // A browser script reads it only when exposed (it may send it back: API_CORS allows it).
        const exposed = sent.headers.get(EXPOSE);
        if (exposed !== null) sent.headers.set(EXPOSE, `${exposed},X-D1-Bookmark`);
        return sent;
      },
    };
    sessionsOf.set(db, sessions);
  }
  return sessions;
}
