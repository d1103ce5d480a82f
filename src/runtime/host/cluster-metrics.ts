/**
 * GET /metrics with CMS_WORKERS > 1: one scrape answers for the whole server. Each worker counts
 * its own requests, and a scrape reached whichever worker took the connection, so every counter
 * jumped between the workers' figures. Now that worker asks the primary, which gathers every
 * worker's registry over the cluster's IPC channel (prom-client's AggregatorRegistry) and adds them
 * up; gauges every worker reads from the one database are taken once (aggregator `max`,
 * prom-metrics.ts).
 */
import cluster from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";

const ASK = "cms:metrics?";
const ANSWER = "cms:metrics";
/** Past prom-client's own 5 s wait for every worker's answer. */
const WAIT_MS = 6_000;

interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/** In the primary: answers a worker's ask with every worker's metrics, aggregated. */
export function gatherWorkerMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on("message", (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== ASK) return;
    const reply = (answer: Omit<Answer, "type" | "id">) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

/**
 * In a worker: `registry` answers the primary's gatherings, and the returned scrape asks the
 * primary for every worker's metrics (rejecting when they cannot all be gathered in time).
 */
export function clusterScrape(registry: Registry): () => Promise<{ contentType: string; text: string }> {
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // installs this worker's answer to the primary's gathering
  const waiting = new Map<number, (answer: Answer) => void>();
  process.on("message", (message: Partial<Answer>) => {
    if (message?.type === ANSWER && typeof message.id === "number") waiting.get(message.id)?.(message as Answer);
  });
  let asked = 0;
  return () =>
    new Promise((resolve, reject) => {
      const id = asked++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`the primary gathered no metrics within ${WAIT_MS} ms`));
      }, WAIT_MS);
      waiting.set(id, ({ text, error }) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (text === undefined) reject(new Error(`the workers' metrics could not be gathered: ${error}`));
        else resolve({ contentType: registry.contentType, text });
      });
      process.send?.({ type: ASK, id });
    });
}
