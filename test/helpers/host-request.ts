/**
 * GETs through node:http, which (unlike fetch) lets a test pick any header (Host, Accept-Encoding)
 * and sees the bytes as sent, with no automatic decompression.
 */
import { request } from "node:http";

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export function getRaw(url: string, headers: Record<string, string>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

export interface HostAnswer {
  status: number;
  /** Without the per-request `date` and `x-request-id`. */
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One server, several hostnames: the answer to a GET with this Host header. */
export async function getWithHost(url: string, host: string): Promise<HostAnswer> {
  const { status, headers, body } = await getRaw(url, { host });
  const { date: _date, "x-request-id": _id, ...rest } = headers;
  return { status, headers: rest, body: body.toString("utf8") };
}
