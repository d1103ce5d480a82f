/**
 * A new file of DIRECT_UPLOAD_MIN_BYTES or more goes straight to storage (docs/direct-storage.md):
 * hash it slice by slice, createUploadURL, PUT the bytes to the URL it names (the bucket, or this
 * service on stores without presigned URLs) with XMLHttpRequest for upload progress, completeUpload.
 * The service then carries no file bytes on a bucket. Not resumable: tus stays for smaller files
 * and for servers without createUploadURL.
 */
import type { DirectFields } from "../client/direct.js";
import { Sha256 } from "../lib/sha256.js";
import type { Api } from "./api.js";
import { humanBytes } from "./format.js";

/** Files this large or larger go straight to storage; below, through tus (resumable). */
export const DIRECT_UPLOAD_MIN_BYTES = 8 * 1024 * 1024;

/** The file is read this much at a time to hash it: never whole in memory. */
const HASH_SLICE_BYTES = 4 * 1024 * 1024;

/** createUploadURL answers these on a server that does not offer it (an older one): use tus. */
const NOT_OFFERED = new Set([404, 405, 501]);

export interface DirectView {
  progress: HTMLProgressElement;
  status: HTMLElement;
}

/**
 * "done": the resource exists; "unavailable": the server offers no upload URLs, or the browser could
 * not send to the one it got (a bucket's origin that the page's CSP or the bucket's CORS does not
 * allow, a network failure): tus can still take the file.
 */
export type DirectOutcome = "done" | "unavailable";

const cancelled = () => new DOMException("cancelled", "AbortError");

/** The PUT got no answer at all (blocked by CSP or CORS, or no connection). */
class Unreachable extends Error {}

/** The SHA-256 (hex) of `file`, read in slices. */
async function sha256Of(file: Blob, view: DirectView, signal: AbortSignal): Promise<string> {
  const hash = new Sha256();
  for (let at = 0; at < file.size; at += HASH_SLICE_BYTES) {
    if (signal.aborted) throw cancelled();
    hash.update(new Uint8Array(await file.slice(at, at + HASH_SLICE_BYTES).arrayBuffer()));
    view.status.textContent = `checking ${humanBytes(Math.min(at + HASH_SLICE_BYTES, file.size))} of ${humanBytes(file.size)}`;
  }
  return hash.hex();
}

/** A problem document's detail, if `body` is one. */
export function problemDetail(body: string | undefined): string | undefined {
  try {
    const problem = JSON.parse(body ?? "") as { detail?: unknown };
    if (typeof problem.detail === "string") return problem.detail;
  } catch {
    // not a problem document
  }
  return undefined;
}

/** Sends `file` with `method` and `headers` to `url`; never with the user's token (the URL is its own authorisation). */
function send(
  ticket: { method: string; url: string; headers: Record<string, string> },
  file: Blob,
  view: DirectView,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(ticket.method, ticket.url);
    for (const [name, value] of Object.entries(ticket.headers)) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener("progress", (event) => {
      view.progress.value = event.loaded;
      view.status.textContent = `${humanBytes(event.loaded)} of ${humanBytes(file.size)}`;
    });
    xhr.addEventListener("load", () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve();
      else reject(new Error(problemDetail(xhr.responseText) ?? `the upload URL answered HTTP ${xhr.status}`));
    });
    xhr.addEventListener("error", () => reject(new Unreachable("the upload URL could not be reached")));
    xhr.addEventListener("abort", () => reject(cancelled()));
    signal.addEventListener("abort", () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

/** Uploads `file` straight to storage; rejects with an AbortError when `signal` cancels it. */
export async function directUpload(
  api: Api,
  file: File,
  fields: DirectFields,
  view: DirectView,
  signal: AbortSignal,
): Promise<DirectOutcome> {
  const sha256 = await sha256Of(file, view, signal);
  const created = api.client.api.POST("/cms/v1.0/createUploadURL", {
    body: { ...fields, size: file.size, sha256 },
    signal,
  });
  if (NOT_OFFERED.has((await created).response.status)) return "unavailable";
  const ticket = await api.send(created);
  // method null: the tenant already stores these bytes, so nothing is sent.
  if (ticket.method !== null && ticket.url !== null) {
    try {
      await send({ method: ticket.method, url: ticket.url, headers: ticket.headers }, file, view, signal);
    } catch (err) {
      // The unused upload's quota is released by the collector when its URL expires.
      if (err instanceof Unreachable) return "unavailable";
      throw err;
    }
  }
  view.progress.value = file.size;
  if (signal.aborted) throw cancelled();
  // Not abortable: a completion the server may already have made must not be shown as cancelled.
  await api.send(api.client.api.POST("/cms/v1.0/completeUpload", { body: { uploadId: ticket.uploadId } }));
  return "done";
}
