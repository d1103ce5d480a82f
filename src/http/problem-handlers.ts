/**
 * Hono glue for the error model: the validation hook, onError/notFound/405 renderers and the
 * OpenAPI response definitions for problems. Statuses come only from the table in problems.ts.
 */
import { z } from "@hono/zod-openapi";
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ZodError } from "zod";
import type { AppEnv } from "./app-env.js";
import {
  type FieldError,
  PROBLEMS,
  type ProblemCode,
  ProblemError,
  problemResponse,
  problemType,
} from "../problems.js";
import { DatabaseBusyError, DatabaseFullError, DatabaseUnavailableError } from "../metadata/database-errors.js";
import { StorageError } from "../storage/blob-store.js";
import { domainProblem } from "./domain-problems.js";

/** The generic code of each status: the first one listed in the table (CONFLICT, not LOCK_NOT_HELD). */
const CODE_BY_STATUS = new Map<number, ProblemCode>();
for (const [code, { status }] of Object.entries(PROBLEMS))
  if (!CODE_BY_STATUS.has(status)) CODE_BY_STATUS.set(status, code as ProblemCode);

/** zod issues → RFC 9457 `errors[]` with JSON Pointers (RFC 6901) into the request part. */
export function toFieldErrors(error: ZodError, target: string): FieldError[] {
  return error.issues.map((issue) => ({
    pointer: `/${[target, ...issue.path.map(String)].map((s) => s.replaceAll("~", "~0").replaceAll("/", "~1")).join("/")}`,
    detail: issue.message,
  }));
}

/** The `defaultHook` of every router: a failed zod validation becomes a 400 naming each field. */
export const validationHook = (
  result: { success: boolean; error?: ZodError; target: string },
  _c: Context<AppEnv>,
): void => {
  if (result.success || !result.error) return;
  const errors = toFieldErrors(result.error, result.target);
  const fields = errors.map((e) => e.pointer.split("/").slice(2).join(".") || e.pointer).join(", ");
  throw new ProblemError("VALIDATION_FAILED", `invalid ${result.target}: ${fields}`, { errors });
};

/** Every problem the app answers passes here: its code is counted (database busy, quota refusals…). */
function render(c: Context<AppEnv>, err: ProblemError): Response {
  c.get("metrics")?.problem(err.code);
  return problemResponse(err, new URL(c.req.url).pathname, c.get("requestId"));
}

/** Seconds a client should wait before retrying a write refused for a busy database. */
const BUSY_RETRY_AFTER_SECONDS = 1;
/** Seconds a client should wait before retrying during a database outage (a restart takes seconds). */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Conditions of the stores that are no bug, wherever they surface (a blob put, a row insert, a
 * package's files): found in the cause chain, since query builders wrap driver errors.
 */
function conditionProblem(err: unknown): ProblemError | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof DatabaseBusyError) {
      return new ProblemError("DATABASE_BUSY", `${e.message}; nothing was changed, retry later`, {
        headers: { "retry-after": String(BUSY_RETRY_AFTER_SECONDS) },
        cause: e,
      });
    }
    if (e instanceof DatabaseUnavailableError) {
      // The detail names no host, port or file: the log's one outage line has what failed.
      return new ProblemError("DATABASE_UNAVAILABLE", "the metadata database is unavailable; retry later", {
        headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
        cause: e,
      });
    }
    if (e instanceof DatabaseFullError || (e instanceof StorageError && e.code === "NO_SPACE")) {
      const where = e instanceof DatabaseFullError ? "the database's volume" : "the blob store";
      return new ProblemError("INSUFFICIENT_STORAGE", `${where} has no space left; nothing of this request was kept`, {
        cause: e,
      });
    }
  }
  return null;
}

export const onError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof ProblemError) return render(c, err);
  const refusal = domainProblem(err);
  if (refusal) return render(c, refusal);
  const condition = conditionProblem(err);
  // An outage is logged once, where it is seen to begin and end (metadata/database-health.ts), not per request.
  if (condition?.code === "DATABASE_UNAVAILABLE") return render(c, condition);
  if (condition) {
    c.get("logger")?.warn(condition.code === "DATABASE_BUSY" ? "database busy" : "out of space", {
      requestId: c.get("requestId"),
      // The condition's own message: a wrapping query error would also carry the statement's parameters.
      detail: (condition.cause as Error).message,
    });
    return render(c, condition);
  }
  if (err instanceof HTTPException) {
    const code = CODE_BY_STATUS.get(err.status) ?? (err.status < 500 ? "VALIDATION_FAILED" : "INTERNAL");
    // Hono's own messages (malformed JSON, body limit) are safe to show; 5xx never echo internals.
    const detail = err.status < 500 && err.message ? err.message : PROBLEMS[code].title;
    return render(c, new ProblemError(code, detail));
  }
  c.get("logger")?.error("unhandled error", { requestId: c.get("requestId"), err });
  return render(
    c,
    new ProblemError("INTERNAL", "The server failed to handle this request; see the logs for its request id."),
  );
};

export const notFound: NotFoundHandler<AppEnv> = (c) =>
  render(c, new ProblemError("NOT_FOUND", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`));

export const onMethodNotAllowed = (c: Context<AppEnv>, allowed: string[]) =>
  render(
    c,
    new ProblemError("METHOD_NOT_ALLOWED", `${c.req.method} is not allowed here; use ${allowed.join(", ")}`, {
      headers: { allow: allowed.join(", ") },
    }),
  );

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().optional(),
    code: z.enum(Object.keys(PROBLEMS) as [ProblemCode, ...ProblemCode[]]),
    requestId: z.string().optional(),
    errors: z.array(z.object({ pointer: z.string(), detail: z.string() })).optional(),
  })
  .openapi("Problem");

const headerDoc = (description: string, example: string) => ({
  description,
  schema: { type: "string" as const, example },
});

/** Headers that come with a problem of some statuses (what a client needs to react to it). */
const PROBLEM_HEADERS: Partial<Record<number, Record<string, ReturnType<typeof headerDoc>>>> = {
  401: {
    "WWW-Authenticate": headerDoc("The bearer challenge (RFC 6750).", 'Bearer realm="cms", error="invalid_token"'),
  },
  405: { Allow: headerDoc("The methods this path accepts.", "GET, HEAD") },
  416: { "Content-Range": headerDoc("The content's size.", "bytes */6789") },
  423: { "Retry-After": headerDoc("Seconds until the lock expires.", "1800") },
  503: { "Retry-After": headerDoc("Seconds to wait before retrying, when the database is busy or unavailable.", "5") },
};

/** An example problem of that status, with its own code (not the first code of the enum). */
function problemExample(status: number) {
  const code = CODE_BY_STATUS.get(status) ?? "INTERNAL";
  return { type: problemType(code), title: PROBLEMS[code].title, status, detail: PROBLEMS[code].title, code };
}

type ProblemResponse = {
  description: string;
  headers?: Record<string, ReturnType<typeof headerDoc>>;
  content: { "application/problem+json": { schema: typeof ProblemSchema; example: ReturnType<typeof problemExample> } };
};

/** OpenAPI response entries for exactly the problem statuses a route can produce. */
export function problemResponses<S extends number>(...statuses: S[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: PROBLEMS[CODE_BY_STATUS.get(status) ?? "INTERNAL"].title,
        ...(PROBLEM_HEADERS[status] ? { headers: PROBLEM_HEADERS[status] } : {}),
        content: { "application/problem+json": { schema: ProblemSchema, example: problemExample(status) } },
      },
    ]),
  ) as Record<S, ProblemResponse>;
}
