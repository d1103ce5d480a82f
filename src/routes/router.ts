/** Every route group starts from createRouter(): an OpenAPIHono whose validation errors are problems. */
import { createRoute, OpenAPIHono, type RouteConfig, type z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/app-env.js";
import { jsonBody } from "../http/middleware/body-limit.js";
import { problemResponses, validationHook } from "../http/problem-handlers.js";
import { API_PREFIX } from "../api-paths.js";

export const createRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

/** The host a request was addressed to; it decides whether active content may be rendered (CMS_CONTENT_ORIGIN). */
export const requestHost = (c: Context<AppEnv>) => new URL(c.req.url).host;

/** A JSON request body is bounded by default; a route with another body (the streamed upload) sets its own policy. */
const defaultBodyPolicy = (route: RouteConfig): MiddlewareHandler[] =>
  route.request?.body?.content && "application/json" in route.request.body.content ? [jsonBody] : [];

/**
 * `route` with its policy bound to it: its access guard (auth/guards.ts), then its body policy
 * (http/middleware/body-limit.ts; by default the JSON limit when it takes a JSON body). Both run
 * before its validators, so a caller without the right token gets 401/403, never a 400 or 413 about
 * a body they may not send, and nothing of that body is read.
 */
export const guarded = <R extends RouteConfig>(
  route: R,
  guard: MiddlewareHandler,
  body: MiddlewareHandler[] = defaultBodyPolicy(route),
): R & { middleware: MiddlewareHandler[] } => ({
  ...route,
  middleware: [guard, ...body],
});

/** What a route group factory returns; its per-route types are not needed outside (no RPC client). */
export type RouteGroup = OpenAPIHono<AppEnv>;

/** Security requirement of protected routes: the bearer scheme, enforced only when auth is on. */
export const BEARER_SECURITY: Record<string, string[]>[] = [{ bearerAuth: [] }];

export interface JsonPostOptions<B extends z.ZodType, S extends number, E extends number> {
  /** The RPC verb, appended to API_PREFIX; also the operationId generated clients call. */
  verb: string;
  tag: string;
  summary: string;
  description?: string;
  body: B;
  /** The success status, and its JSON schema (none for 204). */
  ok: { status: S; description: string; schema?: z.ZodType };
  /** Problem statuses the route can produce (415 and 400 are always possible for a JSON body). */
  errors: E[];
}

/** The RPC shape: POST `/cms/v1.0/<verb>` with a JSON body, bearer-protected. */
export function jsonPost<B extends z.ZodType, S extends number, E extends number>(o: JsonPostOptions<B, S, E>) {
  const ok = o.ok.schema
    ? { description: o.ok.description, content: { "application/json": { schema: o.ok.schema } } }
    : { description: o.ok.description };
  return createRoute({
    method: "post",
    path: `${API_PREFIX}/${o.verb}`,
    operationId: o.verb,
    tags: [o.tag],
    summary: o.summary,
    ...(o.description ? { description: o.description } : {}),
    security: BEARER_SECURITY,
    request: { body: { required: true, content: { "application/json": { schema: o.body } } } },
    responses: { [o.ok.status]: ok, ...problemResponses<E | 400 | 415>(400, 415, ...o.errors) } as Record<
      S | E | 400 | 415,
      typeof ok
    >,
  });
}
