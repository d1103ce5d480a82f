/**
 * The served OpenAPI document: what zod-openapi generates from the route contracts, plus what is
 * true of every operation and would be noise in each contract — the 405/500 (and, behind a token or
 * on the database, 503) answers, HEAD twins of the content GETs, global tags and the server the
 * client talks to.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env.js";
import { problemResponses } from "../../http/problem-handlers.js";
import { withTryItDefaults } from "./try-it.js";

type Document = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;
type Info = Document["info"];
type Operation = {
  operationId?: string;
  summary?: string;
  security?: Record<string, string[]>[];
  responses?: Record<string, Record<string, unknown>>;
};

const TAGS = [
  { name: "meta", description: "The API version, liveness and readiness." },
  {
    name: "resources",
    description: "Register resources (by URI, inline or streamed), query and list them, mint signed links.",
  },
  { name: "content", description: "Fetch content with ranges and conditional requests." },
  { name: "lifecycle", description: "Update, delete and purge resources; their revisions." },
  { name: "locks", description: "Resource locks, and generic named locks in the same namespace." },
  { name: "webhooks", description: "Admin: signed event notifications (Standard Webhooks) to subscribed URLs." },
];

// Every path answers another method with 405 and any bug with 500; with auth on, a token check
// can find the identity provider unreachable (503), and every API operation reads the database,
// which may be busy or unavailable (503 DATABASE_BUSY, DATABASE_UNAVAILABLE).
const ALWAYS = documented(problemResponses(405, 500));
const UNAVAILABLE = documented(problemResponses(503));
const API_PREFIX = "/cms/v1.0/";

/** Contract responses carry zod schemas; in the finished document a problem is the Problem component. */
function documented(responses: ReturnType<typeof problemResponses>) {
  return Object.fromEntries(
    Object.entries(responses).map(([status, { content, ...rest }]) => [
      status,
      {
        ...rest,
        content: {
          "application/problem+json": {
            ...content["application/problem+json"],
            schema: { $ref: "#/components/schemas/Problem" },
          },
        },
      },
    ]),
  );
}

const isContentGet = (op: Operation) => "*/*" in ((op.responses?.["200"]?.content as object | undefined) ?? {});

/** HEAD answers what GET answers, without a body. */
function headTwin(get: Operation): Operation {
  const responses = Object.fromEntries(
    Object.entries(get.responses ?? {}).map(([status, { content: _, ...rest }]) => [status, rest]),
  );
  return { ...get, operationId: `${get.operationId}Head`, summary: `Headers only: ${get.summary}`, responses };
}

function complete(doc: Document): Document {
  for (const [path, ops] of Object.entries(doc.paths ?? {}) as [string, Record<string, Operation>][]) {
    for (const op of Object.values(ops)) {
      const mayBeUnavailable = Boolean(op.security?.length) || path.startsWith(API_PREFIX);
      op.responses = { ...op.responses, ...ALWAYS, ...(mayBeUnavailable ? UNAVAILABLE : {}), ...op.responses };
    }
    if (ops.get && isContentGet(ops.get)) ops.head = headTwin(ops.get);
  }
  return withTryItDefaults({ ...doc, tags: TAGS });
}

/** Builds the document once (the routes are fixed), then stamps each answer with the server's origin. */
export function openApiDocument(app: OpenAPIHono<AppEnv>, info: Info) {
  let base: Document | undefined;
  return (origin: string): Document => {
    base ??= complete(app.getOpenAPI31Document({ openapi: "3.1.0", info }));
    return { ...base, servers: [{ url: origin, description: "This server" }] };
  };
}
