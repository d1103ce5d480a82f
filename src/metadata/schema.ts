/**
 * Drizzle tables for resource metadata. drizzle-kit generates the SQL migrations in ../../drizzle/
 * from this file (`npm run db:generate`); the same migrations apply to libSQL and D1.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const resources = sqliteTable(
  "resources",
  {
    /** `<shortId>-<tenantId>`: the public identifier. */
    uid: text("uid").primaryKey(),
    shortId: text("short_id").notNull(),
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    author: text("author").notNull(),
    mediaType: text("media_type").notNull(),
    externalUri: text("external_uri"),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    /** Key of the content-addressed blob; several rows may share one. */
    blobKey: text("blob_key").notNull(),
    /** Subject of the token that created the resource (null when auth is off). */
    owner: text("owner"),
    /** Epoch milliseconds. */
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("resources_short_id_unique").on(t.shortId),
    index("resources_tenant_created_idx").on(t.tenantId, t.createdAt),
    index("resources_blob_key_idx").on(t.blobKey),
  ],
);

export type ResourceRow = typeof resources.$inferSelect;
export type NewResourceRow = typeof resources.$inferInsert;

