/**
 * The Node/Bun implementation of the app's Metrics (metrics/metrics.ts) on prom-client, behind GET
 * /metrics (metrics-endpoint.ts). Kept out of the Worker bundle: only the process host imports it.
 *
 * Requests are the hot path: prom-client's labelled `inc`/`observe` hash and validate the labels on
 * every call (≈ 4 µs for a request's four updates, against ≈ 30 µs of CPU for a 4 KiB getData), so a
 * request only adds to a plain cell per (method, route, status) here, and the cells become samples
 * when scraped. Rare events (ingests, origin fetches, problems, collector passes) use prom-client's
 * own counters; cache statistics and pending uploads are read when scraped.
 */
import client, { type Metric, type Registry } from "prom-client";
import type { Metrics, OriginOutcome } from "../../metrics/metrics.js";

/** Request durations, seconds: a cached getData takes well under a millisecond, uploads seconds. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface RequestCell {
  labels: { method: string; route: string; status: string };
  count: number;
  sent: number;
  received: number;
}

interface DurationCell {
  labels: { method: string; route: string };
  /** Per bucket (not cumulative), the last one for +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

type Labels = Record<string, string>;
type Sample = { labels: Labels; value: number; metricName?: string };

/** What is read when scraped: each source is optional (no blob cache, no row cache…). */
export interface ScrapeSources {
  blobCache?: () => { hits: number; misses: number };
  rowCache?: () => { hits: number; misses: number };
  pendingUploads?: () => Promise<number>;
  /** The webhook outbox: pending deliveries and the age of the oldest (seconds; 0 when none). */
  webhookOutbox?: () => Promise<{ pending: number; oldestPendingSeconds: number }>;
}

export interface PromMetrics extends Metrics {
  readonly registry: Registry;
  /** Sets what is read when scraped (known once storage and the database are open). */
  observe(sources: ScrapeSources): void;
  /** The Prometheus text exposition of every metric, and its content type. */
  scrape(): Promise<{ contentType: string; text: string }>;
}

/**
 * A metric whose samples are computed when scraped, in the shape prom-client's own metrics give
 * (`get()`), so the registry formats it like the others.
 */
function computed(name: string, help: string, type: "counter" | "histogram", samples: () => Sample[]): Metric {
  return {
    name,
    help,
    type,
    get: async () => ({ name, help, type, values: samples(), aggregator: "sum" }),
  } as unknown as Metric;
}

export function createPromMetrics({ instanceId }: { instanceId: string }): PromMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const requests = new Map<string, RequestCell>();
  const durations = new Map<string, DurationCell>();
  let sources: ScrapeSources = {};

  new client.Gauge({
    name: "cms_instance_info",
    help: "Always 1; `id` is this instance's id (CMS_INSTANCE_ID, as on every log line).",
    labelNames: ["id"],
    registers: [registry],
    aggregator: "max", // CMS_WORKERS > 1 with one CMS_INSTANCE_ID: still 1 (cluster-metrics.ts)
  }).set({ id: instanceId }, 1);

  const requestSamples = (pick: (cell: RequestCell) => number, byStatus: boolean) => () => {
    const out = new Map<string, Sample>();
    for (const cell of requests.values()) {
      const { method, route, status } = cell.labels;
      const key = byStatus ? `${method} ${route} ${status}` : `${method} ${route}`;
      const sample = out.get(key);
      if (sample) sample.value += pick(cell);
      else out.set(key, { labels: byStatus ? cell.labels : { method, route }, value: pick(cell) });
    }
    return [...out.values()];
  };
  registry.registerMetric(
    computed(
      "cms_http_requests_total",
      "HTTP requests answered, by method, route template and status.",
      "counter",
      requestSamples((cell) => cell.count, true),
    ),
  );
  registry.registerMetric(
    computed(
      "cms_http_sent_bytes_total",
      "Bytes written to connections (Node: headers included; Bun: the declared body lengths).",
      "counter",
      requestSamples((cell) => cell.sent, false),
    ),
  );
  registry.registerMetric(
    computed(
      "cms_http_received_bytes_total",
      "Bytes read from connections (Node: heads and bodies; Bun: the declared body lengths).",
      "counter",
      requestSamples((cell) => cell.received, false),
    ),
  );
  registry.registerMetric(
    computed(
      "cms_http_request_duration_seconds",
      "Time from a request's arrival to its answer's last byte handed to the OS (Bun: to the answer).",
      "histogram",
      () => {
        const samples: Sample[] = [];
        for (const { labels, buckets, sum, count } of durations.values()) {
          let cumulative = 0;
          BUCKETS.forEach((le, i) => {
            cumulative += buckets[i] as number;
            samples.push({
              metricName: "cms_http_request_duration_seconds_bucket",
              labels: { ...labels, le: String(le) },
              value: cumulative,
            });
          });
          samples.push({
            metricName: "cms_http_request_duration_seconds_bucket",
            labels: { ...labels, le: "+Inf" },
            value: count,
          });
          samples.push({ metricName: "cms_http_request_duration_seconds_sum", labels, value: sum });
          samples.push({ metricName: "cms_http_request_duration_seconds_count", labels, value: count });
        }
        return samples;
      },
    ),
  );

  const counter = (name: string, help: string, labelNames: string[] = []) =>
    new client.Counter({ name, help, labelNames, registers: [registry] });
  const problems = counter("cms_problems_total", "Problem answers (RFC 9457), by code.", ["code"]);
  const databaseErrors = counter(
    "cms_database_errors_total",
    "Requests refused because the database was busy (write lock held too long) or unavailable.",
    ["kind"],
  );
  const quotaRefusals = counter("cms_quota_refusals_total", "Requests refused by a tenant quota (QUOTA_EXCEEDED).");
  const ingests = counter("cms_ingests_total", "Contents stored: resources' bytes and each of a package's files.");
  const ingestedBytes = counter("cms_ingested_bytes_total", "Bytes of the contents stored.");
  const originFetches = counter(
    "cms_origin_fetches_total",
    "Fetches of external URIs, by outcome (ok, refused by policy, failed, timeout).",
    ["outcome"],
  );
  const collectorPasses = counter("cms_collector_passes_total", "Blob collection passes finished.");
  const collectorRemoved = counter("cms_collector_removed_blobs_total", "Blobs the collector removed.");
  for (const outcome of ["ok", "refused", "failed", "timeout"]) originFetches.inc({ outcome }, 0);
  for (const kind of ["busy", "unavailable"]) databaseErrors.inc({ kind }, 0);
  quotaRefusals.inc(0);

  /** A counter set from a running total when scraped (the caches count themselves). */
  const lookups = (name: string, help: string, read: () => ScrapeSources["blobCache"]) => {
    registry.registerMetric(
      computed(name, help, "counter", () => {
        const stats = read()?.();
        return stats
          ? [
              { labels: { result: "hit" }, value: stats.hits },
              { labels: { result: "miss" }, value: stats.misses },
            ]
          : [];
      }),
    );
  };
  lookups("cms_blob_cache_lookups_total", "Small-blob memory cache lookups, by result.", () => sources.blobCache);
  lookups("cms_row_cache_lookups_total", "getData row cache lookups, by result.", () => sources.rowCache);
  // Counted on getData's fast paths: plain numbers, read when scraped.
  const imageLookups = { hits: 0, misses: 0 };
  lookups(
    "cms_image_cache_lookups_total",
    "Stored image derivative lookups, by result (miss: the derivative is made).",
    () => () => imageLookups,
  );
  const imageTransforms = counter(
    "cms_image_transforms_total",
    "Image transforms, by outcome (refused: 4xx for the source or request; busy: 503, over time or queue).",
    ["outcome"],
  );
  const imageTransformSeconds = new client.Histogram({
    name: "cms_image_transform_duration_seconds",
    help: "Image transform time in seconds, waiting for a transform slot included, by outcome.",
    labelNames: ["outcome"],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  for (const outcome of ["made", "refused", "busy", "failed"]) imageTransforms.inc({ outcome }, 0);
  new client.Gauge({
    name: "cms_tus_pending_uploads",
    help: "Resumable (tus) uploads not finished and not expired, all tenants (read from the database when scraped).",
    registers: [registry],
    aggregator: "max", // every worker reads the same database: counted once, not once per worker

    async collect() {
      // A scrape during a database outage still answers: the gauge is left out, not an error.
      const count = await sources.pendingUploads?.().catch(() => undefined);
      if (count === undefined) this.reset();
      else this.set(count);
    },
  });

  const webhookDeliveries = new client.Counter({
    name: "cms_webhook_deliveries_total",
    help: "Webhook delivery attempts, by outcome (failed: the last attempt failed).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  for (const outcome of ["delivered", "retried", "failed"]) webhookDeliveries.inc({ outcome }, 0);
  const outboxGauge = (
    name: string,
    help: string,
    read: (o: { pending: number; oldestPendingSeconds: number }) => number,
  ) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      aggregator: "max", // read from the one database by every worker
      async collect() {
        // A scrape during a database outage still answers: the gauge is left out, not an error.
        const figures = await sources.webhookOutbox?.().catch(() => undefined);
        if (figures === undefined) this.reset();
        else this.set(read(figures));
      },
    });
  outboxGauge(
    "cms_webhook_outbox_pending",
    "Webhook deliveries waiting to be sent (all subscriptions).",
    (o) => o.pending,
  );
  outboxGauge(
    "cms_webhook_oldest_pending_seconds",
    "Age of the oldest webhook delivery still waiting (0 when none): a receiver or deliverer falling behind.",
    (o) => o.oldestPendingSeconds,
  );

  return {
    enabled: true,
    registry,
    request(method, route, status, seconds, sentBytes, receivedBytes) {
      const key = `${method} ${route} ${status}`;
      let cell = requests.get(key);
      if (!cell) {
        cell = { labels: { method, route, status: String(status) }, count: 0, sent: 0, received: 0 };
        requests.set(key, cell);
      }
      cell.count++;
      cell.sent += sentBytes;
      cell.received += receivedBytes;
      const timing = `${method} ${route}`;
      let duration = durations.get(timing);
      if (!duration) {
        duration = { labels: { method, route }, buckets: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 };
        durations.set(timing, duration);
      }
      let i = 0;
      while (i < BUCKETS.length && seconds > (BUCKETS[i] as number)) i++;
      duration.buckets[i] = (duration.buckets[i] ?? 0) + 1;
      duration.sum += seconds;
      duration.count++;
    },
    problem(code) {
      problems.inc({ code });
      if (code === "DATABASE_BUSY") databaseErrors.inc({ kind: "busy" });
      else if (code === "DATABASE_UNAVAILABLE") databaseErrors.inc({ kind: "unavailable" });
      else if (code === "QUOTA_EXCEEDED") quotaRefusals.inc();
    },
    ingest(bytes) {
      ingests.inc();
      ingestedBytes.inc(bytes);
    },
    originFetch(outcome: OriginOutcome) {
      originFetches.inc({ outcome });
    },
    collectorPass(removed) {
      collectorPasses.inc();
      collectorRemoved.inc(removed);
    },
    webhookDelivery(outcome) {
      webhookDeliveries.inc({ outcome });
    },
    imageTransform(outcome, seconds) {
      imageTransforms.inc({ outcome });
      imageTransformSeconds.observe({ outcome }, seconds);
    },
    imageCacheLookup(hit) {
      if (hit) imageLookups.hits++;
      else imageLookups.misses++;
    },
    observe(next) {
      sources = next;
    },
    async scrape() {
      return { contentType: registry.contentType, text: await registry.metrics() };
    },
  };
}
