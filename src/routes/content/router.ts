/** Content endpoints: resolve a live resource (tenant-checked) and send it as the content core decides (src/delivery/). */
import type { RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Guards } from "../../auth/guards.js";
import type { AppEnv } from "../../http/app-env.js";
import { deliveryCore } from "../../delivery/core.js";
import { takeHandedOverRow } from "../../delivery/handed-over-row.js";
import { imageParam, versionParam } from "../../delivery/query.js";
import { webContentSender } from "../../delivery/web.js";
import { ProblemError } from "../../problems.js";
import { answerCacheHeaders } from "../../http/cache-policy.js";
import type { ImageDerivatives } from "../../images/derivatives.js";
import type { ContentService } from "../../services/content.js";
import { parseUri } from "../../services/resource-ids.js";
import type { ResourceService } from "../../services/resources.js";
import type { RevisionService } from "../../services/revisions.js";
import { createRouter, guarded, requestHost, type RouteGroup } from "../router.js";
import * as contract from "./contract.js";

/** Hono's pattern for a documented `{context}/{path}` route: the path parameter spans segments. */
const honoPath = (route: RouteConfig) => route.path.replace("{context}", ":context").replace("{path}", ":path{.+}");

const MAX_UID_TEXT = 400;

/** getParentUuid's body: the UID as plain text, or as a JSON string. */
async function uidFromBody(c: Context<AppEnv>): Promise<string> {
  const type = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "text/plain" && type !== "application/json") {
    throw new ProblemError("UNSUPPORTED_MEDIA_TYPE", "send the UID as text/plain (or as a JSON string)");
  }
  const text = (await c.req.text()).trim();
  let uid: unknown = text;
  if (type === "application/json") {
    try {
      uid = JSON.parse(text);
    } catch {
      uid = undefined;
    }
  }
  if (typeof uid !== "string" || uid === "" || uid.length > MAX_UID_TEXT) {
    const detail = `must be a resource UID of at most ${MAX_UID_TEXT} characters`;
    throw new ProblemError("VALIDATION_FAILED", `invalid body: ${detail}`, { errors: [{ pointer: "/body", detail }] });
  }
  return uid;
}

/** Who asks for a transform, for a fair share of the transform slots (images/limit.ts): a link, a user, or anyone. */
function callerOf(c: Context<AppEnv>, linkHolder: boolean): string {
  if (linkHolder) return `link:${c.req.query("signature") ?? ""}`;
  const { subject, issuer } = c.get("principal");
  return subject === null ? "anonymous" : `user:${issuer ?? ""}:${subject}`;
}

export function createContentRouter({
  resources,
  revisions,
  content,
  guards,
  images,
}: {
  resources: ResourceService;
  revisions: RevisionService;
  content: ContentService;
  guards: Guards;
  /** getData's image derivatives (`?width=…`, images/derivatives.ts); absent: image parameters are ignored. */
  images?: ImageDerivatives;
}): RouteGroup {
  const router = createRouter();
  const consumer = guards.role("consumer");
  const { send, respond } = webContentSender(content);
  const core = deliveryCore({ content, images, revisions });
  const fields = (c: Context<AppEnv>) => (name: string) => c.req.raw.headers.get(name);

  const byUri = async (c: Context<AppEnv>) => {
    // A row the runtime's fast path looked up comes with its query parsed (delivery/query.ts): neither is done twice.
    const handed = takeHandedOverRow(c.env, c.req.raw);
    // The query parsed once, when first asked: Hono's query(name) scans the whole URL again for every
    // name it does not find (≈ 12 500 instructions of a signed link's answer went to the image
    // parameters' lookups; bench/NOTES.md, tenth pass).
    let params: Record<string, string> | undefined;
    const param = (name: string): string | undefined => (params ??= c.req.query())[name];
    // `v` is checked before the lookup (a malformed one: 400 whether or not the resource exists), the image parameters after.
    const version = handed ? handed.query.version : versionParam(param);
    const row = await resources.findByUri(
      c.req.param("context") ?? "",
      c.req.param("path") ?? "",
      c.get("principal"),
      handed?.row,
    );
    // A signed link's holder may name presets only (the link signs no image parameters).
    const linkHolder = c.get("signedLinkSeconds") !== undefined;
    const query = handed ? handed.query : { version, image: imageParam(images, param, { linkHolder }) };
    const cache = answerCacheHeaders(content.cache, version !== undefined, c.get("signedLinkSeconds"));
    const caller = callerOf(c, linkHolder);
    const answer = await core.answer(row, query, c.req.method, fields(c), requestHost(c), cache, caller);
    return respond(answer, c.req.method, c.get("signedLinkSeconds"));
  };
  for (const route of [contract.getData, contract.getMultiPartData]) {
    router.openAPIRegistry.registerPath(route);
    router.get(honoPath(route), guards.read, byUri);
  }

  return router
    .openapi(guarded(contract.getDataUuid, guards.read), async (c) => {
      const row = await resources.findByUid(c.req.valid("param").resourceUID, c.get("principal"));
      const linkSeconds = c.get("signedLinkSeconds");
      const cache = answerCacheHeaders(content.cache, false, linkSeconds);
      return (await send(row, c.req.method, fields(c), requestHost(c), cache, linkSeconds)) as never;
    })
    .openapi(guarded(contract.postData, consumer), async (c) => {
      const { resourceUID, resourceURI } = c.req.valid("json");
      const principal = c.get("principal");
      const uri = resourceURI ? parseUri(resourceURI) : null;
      const row = resourceUID
        ? await resources.findByUid(resourceUID, principal)
        : await resources.findByUri(uri?.context ?? "", uri?.path ?? "", principal);
      // The whole representation: a POST carries no range or validators (RFC 9110 §14.2).
      return (await send(row, "GET", undefined, requestHost(c))) as never;
    })
    .openapi(guarded(contract.getParentUuid, consumer), async (c) => {
      const parent = await resources.parentOf(await uidFromBody(c), c.get("principal"));
      return c.text(parent, 200);
    });
}
