/**
 * What the app, the services and the servers report for operators, as a runtime-free interface: the
 * Node/Bun host implements it with prom-client (runtime/host/prom-metrics.ts, GET /metrics), the
 * Worker with an optional Analytics Engine binding, everything else gets `noopMetrics`. Callers pass
 * route templates and codes, never raw paths or other client input (each label value is a series).
 */

/** How an origin fetch (external URI) ended: its ProblemError code's kind, or ok. */
export type OriginOutcome = "ok" | "refused" | "failed" | "timeout";

export interface Metrics {
  /** False for the no-op: servers skip the per-request work (route matching) it would discard. */
  readonly enabled: boolean;
  /**
   * One answered HTTP request: `route` is a route template (route-templates.ts), `sentBytes` and
   * `receivedBytes` what went over the connection (0 where the server cannot tell).
   */
  request(
    method: string,
    route: string,
    status: number,
    seconds: number,
    sentBytes: number,
    receivedBytes: number,
  ): void;
  /** A problem answer's code (problems.ts): database busy/unavailable and quota refusals are among them. */
  problem(code: string): void;
  /** Content stored (a resource's bytes, each of a package's files): its size. */
  ingest(bytes: number): void;
  originFetch(outcome: OriginOutcome): void;
  /** A blob collection pass finished, with the blobs it removed. */
  collectorPass(removed: number): void;
  /** One webhook delivery attempt's outcome (failed: its last attempt). */
  webhookDelivery(outcome: WebhookOutcome): void;
  /** One image transform ended (images/derivatives.ts): how, and its seconds, waiting for a slot included. */
  imageTransform(outcome: ImageTransformOutcome, seconds: number): void;
  /** A stored derivative looked up: found (hit) or to be made (miss). On getData's fast paths: keep it cheap. */
  imageCacheLookup(hit: boolean): void;
}

export type WebhookOutcome = "delivered" | "retried" | "failed";

/** made: stored; refused: the source or request (4xx); busy: over time or queue (503); failed: anything else. */
export type ImageTransformOutcome = "made" | "refused" | "busy" | "failed";

export const noopMetrics: Metrics = {
  enabled: false,
  request() {},
  problem() {},
  ingest() {},
  originFetch() {},
  collectorPass() {},
  webhookDelivery() {},
  imageTransform() {},
  imageCacheLookup() {},
};
