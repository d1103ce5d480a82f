/**
 * An uploadResource the app is reading, over a raw keep-alive connection: its head went out with
 * `Expect: 100-continue` and 100 Continue came back (sent when the app starts reading the body), its
 * body held back until `finish`. For what a server does with a request in flight (a stop, a signal).
 */
import { API, form } from "./cms-client.js";
import { openRaw, type RawResponse } from "./raw-http.js";

export interface UploadInFlight {
  /** Sends the body; resolves with the final answer. */
  finish(): Promise<RawResponse>;
  /** Resolves true once the server has closed the connection (false after `timeoutMs`). */
  closed(timeoutMs?: number): Promise<boolean>;
}

export async function uploadInFlight(
  url: string,
  fields: Record<string, string>,
  text: string,
  timeoutMs = 10_000,
): Promise<UploadInFlight> {
  const body = new Response(form(fields, { bytes: new TextEncoder().encode(text), type: "text/plain" }));
  const bytes = new Uint8Array(await body.arrayBuffer());
  const conn = await openRaw(Number(new URL(url).port));
  conn.write(
    `POST ${API}/uploadResource HTTP/1.1\r\nHost: cms\r\nContent-Type: ${body.headers.get("content-type")}\r\n` +
      `Content-Length: ${bytes.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  const interim = await conn.response(timeoutMs);
  if (interim.status !== 100) throw new Error(`expected 100 Continue, got ${interim.status}: ${interim.body}`);
  return {
    finish() {
      conn.write(bytes);
      return conn.response(timeoutMs);
    },
    closed: (ms) => conn.closed(ms),
  };
}
