/**
 * The wiring's metrics around parts every runtime builds the same way (runtime/app-deps.ts): origin
 * fetch outcomes and blob collection passes, counted without the parts knowing. Runtime-free.
 */
import type { FetchOrigin } from "../origin/fetch-origin.js";
import type { BlobCollector } from "../services/blob-collector.js";
import type { Metrics, OriginOutcome } from "../metrics/metrics.js";

const OUTCOMES: Record<string, OriginOutcome> = {
  ORIGIN_REFUSED: "refused",
  ORIGIN_FAILED: "failed",
  ORIGIN_TIMEOUT: "timeout",
};

/** How a fetch that threw ended: its problem code's kind; anything else (a bug, an abort) counts as failed. */
const outcomeOf = (err: unknown): OriginOutcome => OUTCOMES[(err as { code?: string } | null)?.code ?? ""] ?? "failed";

/** `fetchOrigin`, counting each fetch once its headers arrived (ok) or it was refused or failed. */
export function countOriginFetches(fetchOrigin: FetchOrigin, metrics: Metrics): FetchOrigin {
  if (!metrics.enabled) return fetchOrigin;
  return async (url, options) => {
    try {
      const response = await fetchOrigin(url, options);
      metrics.originFetch("ok");
      return response;
    } catch (err) {
      metrics.originFetch(outcomeOf(err));
      throw err;
    }
  };
}

/** `collector` (an object of closures), counting each finished pass and the blobs it removed. */
export function countCollectorPasses(collector: BlobCollector, metrics: Metrics): BlobCollector {
  if (!metrics.enabled) return collector;
  return {
    ...collector,
    async pass() {
      const figures = await collector.pass();
      metrics.collectorPass(figures.removed);
      return figures;
    },
  };
}
