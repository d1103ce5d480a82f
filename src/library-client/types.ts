/**
 * The API's answers as the page reads them: the OpenAPI document's own schemas (generated from the
 * routes' zod schemas into src/client/openapi.d.ts), not written a second time here.
 */
import type { components } from "../client/openapi.js";

type Schemas = components["schemas"];
/** A resource as listed (listResources); queryResource's answer is one too (with its package's files). */
export type Resource = Omit<Schemas["ResourceItem"], "resourcesList">;
export type ResourcePage = Schemas["ResourcePage"];
export type Usage = Schemas["Usage"];
export type Revision = Schemas["Revision"];
export type Lock = Schemas["Lock"];
export type ResourceAccess = Schemas["ResourceAccess"];
export type TenantSummary = Schemas["TenantSummary"];

export type { LibrarySettings as Settings } from "../routes/library/page.js";
