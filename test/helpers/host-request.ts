/** GET through node:http, which (unlike fetch) lets a test pick the Host header: one server, several hostnames. */
import { request } from "node:http";

export interface HostAnswer {
  status: number;
  /** Without the per-request `date` and `x-request-id`. */
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function getWithHost(url: string, host: string): Promise<HostAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        const { date: _date, "x-request-id": _id, ...headers } = res.headers;
        resolve({ status: res.statusCode ?? 0, headers, body });
      });
    });
    req.on("error", reject);
    req.end();
  });
}
