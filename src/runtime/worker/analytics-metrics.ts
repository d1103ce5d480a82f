/**
 * The Metrics interface (metrics/metrics.ts) over a Workers Analytics Engine dataset: what stands in
 * for /metrics on Workers (README, Metrics). One data point per answered request, by route template
 * (never the raw path): indexes [route], blobs [method, route, status, instance], doubles
 * [milliseconds, bytes sent]. The other counters have no dataset of their own here.
 */
import type { Metrics } from "../../metrics/metrics.js";

/** The part of an Analytics Engine dataset binding the Worker writes to. */
export interface AnalyticsEngineLike {
  writeDataPoint(point: { indexes?: string[]; blobs?: string[]; doubles?: number[] }): void;
}

export function analyticsEngineMetrics(dataset: AnalyticsEngineLike, instance: string): Metrics {
  return {
    enabled: true,
    request(method, route, status, seconds, sentBytes) {
      dataset.writeDataPoint({
        indexes: [route],
        blobs: [method, route, String(status), instance],
        doubles: [Math.round(seconds * 100_000) / 100, sentBytes],
      });
    },
    problem() {},
    ingest() {},
    originFetch() {},
    collectorPass() {},
    webhookDelivery() {},
    imageTransform() {},
    imageCacheLookup() {},
  };
}
