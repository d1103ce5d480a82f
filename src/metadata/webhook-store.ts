/**
 * WebhookStore: webhook subscriptions and the outbox of their deliveries (issue 31). `recordEvents`
 * is the statement each change puts in its own batch, so an event exists exactly when its change does;
 * `claim` hands due deliveries to one instance at a time under a lease, as the blob collector does.
 */
import { and, asc, desc, eq, lte, type SQL, sql } from "drizzle-orm";
import type { AnySQLiteDatabase, BatchSQLiteDatabase } from "./store-types.js";
import {
  resources,
  type WebhookDeliveryRow,
  webhookDeliveries,
  type WebhookEventType,
  type WebhookSubscriptionRow,
  webhookSubscriptions,
} from "./schema.js";

/**
 * One delivery per matching subscription for each resource `which` selects, the body built from the
 * row as it is when the statement runs (so put it after an update, before a purge's delete). No
 * subscription: no row, and next to no cost. `actor` is the subject (or lock holder) who made the change.
 */
export function recordEvents(
  db: AnySQLiteDatabase,
  type: WebhookEventType,
  which: SQL,
  actor: string | null,
  now: number,
) {
  const r = resources;
  const s = webhookSubscriptions;
  const body = sql`json_object('type', ${type}, 'timestamp', ${new Date(now).toISOString()}, 'data', json_object('resourceUID', ${r.uid}, 'resourceURI', ${r.context} || '/' || ${r.path}, 'resourceTenantId', ${r.tenantId}, 'sha256', ${r.sha256}, 'size', ${r.size}, 'mediaType', ${r.mediaType}, 'revision', ${r.revision}, 'title', ${r.title}, 'description', ${r.description}, 'altText', ${r.altText}, 'tags', json(${r.tags}), 'folder', ${r.folder}, 'metadata', json(${r.metadata}), 'metadataVersion', cast(${r.metadataVersion} as text), 'actor', ${actor}))`;
  return db
    .insert(webhookDeliveries)
    .select(
      sql`select null, 'msg_' || lower(hex(randomblob(16))), ${s.id}, ${type}, ${r.uid}, ${body}, 'pending', 0, ${now}, null, null, null, ${now}, ${now} from ${r}, ${s} where (${which}) and (${s.events} = '[]' or exists (select 1 from json_each(${s.events}) where value = ${type})) and (${s.tenants} = '[]' or exists (select 1 from json_each(${s.tenants}) where value = ${r.tenantId})) order by ${r.uid}`,
    );
}

export interface DeliveryOutcome {
  /** The lease the claim set: a completion by a claim that was taken over changes nothing. */
  claimedUntil: number;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  now: number;
  /** When not delivered: the time of the next attempt, or null when this was the last one (failed). */
  retryAt: number | null;
}

export interface WebhookStore {
  addSubscription(row: WebhookSubscriptionRow): Promise<void>;
  subscriptions(): Promise<WebhookSubscriptionRow[]>;
  subscription(id: string): Promise<WebhookSubscriptionRow | null>;
  /** Removes the subscription and its deliveries; false if there was none. */
  removeSubscription(id: string): Promise<boolean>;
  deliveries(subscriptionId: string, limit: number): Promise<WebhookDeliveryRow[]>;
  /** Makes a delivery pending again, due now, attempts reset; false if no such delivery of that subscription. */
  retry(subscriptionId: string, deliveryId: string, now: number): Promise<boolean>;
  /**
   * Claims up to `limit` due deliveries until `now + leaseMs`: unclaimed or with an expired lease,
   * and each the oldest pending one of its subscription and resource (so a resource's events go in
   * order). No subscription gets more than `perSubscription` live claims, counting those of every
   * instance, and subscriptions take turns (each one's oldest first), so a receiver that hangs holds
   * its own claims only, never the others' turns.
   */
  claim(now: number, leaseMs: number, limit: number, perSubscription: number): Promise<WebhookDeliveryRow[]>;
  complete(seq: number, outcome: DeliveryOutcome): Promise<boolean>;
  /** Gives a claim back unattempted (the instance is stopping): due again at once, attempts unchanged. */
  release(seq: number, claimedUntil: number): Promise<void>;
  /** Pending deliveries, and the creation time of the oldest (metrics). */
  depth(): Promise<{ pending: number; oldestPendingAt: number | null }>;
}

export function createWebhookStore(db: BatchSQLiteDatabase): WebhookStore {
  const d = webhookDeliveries;
  return {
    async addSubscription(row) {
      await db.insert(webhookSubscriptions).values(row);
    },
    subscriptions() {
      return db.select().from(webhookSubscriptions).orderBy(asc(webhookSubscriptions.createdAt));
    },
    async subscription(id) {
      const [row] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, id)).limit(1);
      return row ?? null;
    },
    async removeSubscription(id) {
      const [, removed] = await db.batch([
        db.delete(d).where(eq(d.subscriptionId, id)),
        db
          .delete(webhookSubscriptions)
          .where(eq(webhookSubscriptions.id, id))
          .returning({ id: webhookSubscriptions.id }),
      ]);
      return removed.length > 0;
    },
    deliveries(subscriptionId, limit) {
      return db.select().from(d).where(eq(d.subscriptionId, subscriptionId)).orderBy(desc(d.seq)).limit(limit);
    },
    async retry(subscriptionId, deliveryId, now) {
      const rows = await db
        .update(d)
        .set({ status: "pending", attempts: 0, nextAttemptAt: now, claimedUntil: null, updatedAt: now })
        .where(and(eq(d.subscriptionId, subscriptionId), eq(d.id, deliveryId)))
        .returning({ seq: d.seq });
      return rows.length > 0;
    },
    async claim(now, leaseMs, limit, perSubscription) {
      const free = sql`(${d.claimedUntil} is null or ${d.claimedUntil} <= ${now})`;
      // Every instance polls each second, and most polls find nothing: asked first as a read (the due
      // index), so an idle poll takes no write lock and syncs no WAL, and never waits behind another
      // process's writes. A delivery that falls due just after is claimed at the next poll.
      const due = await db
        .select({ seq: d.seq })
        .from(d)
        .where(and(eq(d.status, "pending"), lte(d.nextAttemptAt, now), free))
        .limit(1);
      if (due.length === 0) return [];
      // One statement: two instances claiming at once never both get a delivery (SQLite serialises writes).
      // Due, free, and the oldest pending one of its subscription and resource; numbered per subscription.
      const candidates = sql`select x.seq, x.subscription_id, row_number() over (partition by x.subscription_id order by x.seq) as turn from ${d} x where x.status = 'pending' and x.next_attempt_at <= ${now} and (x.claimed_until is null or x.claimed_until <= ${now}) and not exists (select 1 from ${d} e where e.subscription_id = x.subscription_id and e.resource_uid = x.resource_uid and e.seq < x.seq and e.status = 'pending')`;
      // Live claims per subscription, over pending rows only: named, since grouping would otherwise walk
      // the (subscription, resource, seq) index through every delivery ever made.
      const live = sql`select y.subscription_id, count(*) as n from ${d} y indexed by webhook_deliveries_due_idx where y.status = 'pending' and y.claimed_until > ${now} group by y.subscription_id`;
      return db
        .update(d)
        .set({ claimedUntil: now + leaseMs })
        .where(
          and(
            eq(d.status, "pending"),
            free,
            sql`${d.seq} in (select c.seq from (${candidates}) c left join (${live}) l on l.subscription_id = c.subscription_id where c.turn + coalesce(l.n, 0) <= ${perSubscription} order by c.turn, c.seq limit ${limit})`,
          ),
        )
        .returning();
    },
    async complete(seq, o) {
      const mine = and(eq(d.seq, seq), eq(d.claimedUntil, o.claimedUntil), eq(d.status, "pending"));
      const rows = await db
        .update(d)
        .set({
          status: o.delivered ? "delivered" : o.retryAt === null ? "failed" : "pending",
          attempts: sql`${d.attempts} + 1`,
          nextAttemptAt: o.retryAt ?? o.now,
          claimedUntil: null,
          lastStatusCode: o.statusCode,
          lastError: o.error,
          updatedAt: o.now,
        })
        .where(mine)
        .returning({ seq: d.seq });
      return rows.length > 0;
    },
    async release(seq, claimedUntil) {
      await db
        .update(d)
        .set({ claimedUntil: null })
        .where(and(eq(d.seq, seq), eq(d.claimedUntil, claimedUntil), eq(d.status, "pending")));
    },
    async depth() {
      const [row] = await db
        .select({ pending: sql<number>`count(*)`, oldest: sql<number | null>`min(${d.createdAt})` })
        .from(d)
        .where(eq(d.status, "pending"));
      return { pending: Number(row?.pending ?? 0), oldestPendingAt: row?.oldest ?? null };
    },
  };
}
