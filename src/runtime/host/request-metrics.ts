/**
 * Requests counted by the Node and Bun servers, where every request is seen (the fast path never
 * reaches the app's middleware): method and route template, never the raw path.
 */
import type { App, AppDeps } from "../../app.js";
import { createRouteTemplates, methodLabel } from "../../metrics/route-templates.js";
import { METRICS_PATH } from "./metrics-endpoint.js";

/** Told of every answered request: its path without the query, the bytes that went over the connection. */
export type RequestObserver = (
  method: string,
  path: string,
  status: number,
  seconds: number,
  sentBytes: number,
  receivedBytes: number,
) => void;

/** The access log's observer that counts requests by route template; none when metrics are off. */
export function requestMetrics(metrics: AppDeps["metrics"], app: Pick<App, "routes">): RequestObserver | undefined {
  if (!metrics.enabled) return undefined;
  const routeOf = createRouteTemplates(app.routes, [METRICS_PATH]);
  return (method, path, status, seconds, sent, received) => {
    const label = methodLabel(method);
    metrics.request(label, routeOf(label, path), status, seconds, sent, received);
  };
}
