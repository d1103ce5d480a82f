/**
 * The README's seed flow through a client generated from the served document by tools nobody here
 * wrote: openapi-typescript's types (generated/openapi.d.ts) + openapi-fetch. Type-checked with
 * TypeScript 5, then run: create, query, getData with Range and with If-None-Match.
 *   node --import tsx tools/openapi-gen/seed-flow.ts <baseUrl> <externalURI> <expectedText>
 */
import createClient from "openapi-fetch";
import type { paths } from "./generated/openapi.js";

// The tool project has no @types/node; this is all of Node the script uses.
declare const process: { argv: string[] };

const [baseUrl, externalURI, expected] = process.argv.slice(2) as [string, string, string];
const api = createClient<paths>({ baseUrl });

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`seed flow: ${what}`);
}

const created = await api.POST("/cms/v1.0/createResource", {
  body: { resourceAuthor: "Test Author", resourceExternalURI: externalURI, resourceMediaType: "text/plain", resourceName: "seed.txt", resourceTenantId: "zaq12345" },
});
check(created.response.status === 201 && !!created.data, `createResource answered ${created.response.status}`);
const resource = created.data!;

const queried = await api.POST("/cms/v1.0/queryResource", { body: { queryUID: resource.resourceUID } });
check(queried.data?.resourceURI === resource.resourceURI, "queryResource gave another resource");

const [context, path] = resource.resourceURI.split("/") as [string, string];
const params = { path: { context, path } };
const ranged = await api.GET("/cms/v1.0/getData/{context}/{path}", { params: { ...params, header: { Range: "bytes=0-3" } }, parseAs: "text" });
check(ranged.response.status === 206 && ranged.data === expected.slice(0, 4), `Range answered ${ranged.response.status} ${ranged.data}`);
const etag = ranged.response.headers.get("etag");
check(etag === `"${resource.sha256}"`, `ETag ${etag} is not the quoted sha256`);

const cached = await api.GET("/cms/v1.0/getData/{context}/{path}", { params: { ...params, header: { "If-None-Match": etag! } }, parseAs: "text" });
check(cached.response.status === 304, `If-None-Match answered ${cached.response.status}`);

const missing = await api.POST("/cms/v1.0/queryResource", { body: { queryUID: "nope" } });
check(missing.error?.code === "NOT_FOUND" || missing.error?.code === "VALIDATION_FAILED", `an unknown UID gave ${JSON.stringify(missing.error)}`);

console.log(JSON.stringify({ resourceURI: resource.resourceURI, range: ranged.data, notModified: cached.response.status }));
