/**
 * uploadDirect: a file's bytes straight to storage (docs/direct-storage.md). Hash the file, ask
 * createUploadURL for a URL bound to its size and SHA-256, PUT the bytes there (to the bucket, or to
 * the service on stores without presigned URLs; never with the caller's token), then completeUpload.
 * A duplicate of the tenant's content (`method: null`) sends nothing.
 */
import { Sha256 } from "../lib/sha256.js";
import { CmsProblem } from "./problem.js";
import type { Progress } from "./upload.js";

export interface DirectFields {
  resourceTenantId: string;
  resourceAuthor: string;
  resourceName: string;
  /** Announced type: checked against the bytes when the upload completes. */
  resourceMediaType?: string;
}

/** The service has no createUploadURL (an older server): the caller may upload through it instead. */
export class DirectUploadUnavailable extends Error {
  constructor(status: number) {
    super(`createUploadURL is not offered (HTTP ${status})`);
    this.name = "DirectUploadUnavailable";
  }
}

interface Ticket {
  uploadId: string;
  method: "PUT" | null;
  url: string | null;
  headers: Record<string, string>;
}

/** The file's SHA-256 (hex), read once as a stream (never whole in memory). */
export async function sha256Of(file: Blob): Promise<string> {
  const hash = new Sha256();
  const reader = file.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return hash.hex();
    hash.update(value);
  }
}

/**
 * `post(verb, body)` calls the service with the caller's token; `put` sends to the upload URL
 * without it. The Blob is sent as one body, so the runtime sets its Content-Length (signed on a
 * bucket's URL); progress is reported at the end.
 */
export async function uploadDirect<R>(
  post: (verb: "createUploadURL" | "completeUpload", body: unknown) => Promise<Response>,
  put: (request: Request) => Promise<Response>,
  fields: DirectFields,
  file: Blob,
  o: { onProgress?: Progress; signal?: AbortSignal } = {},
): Promise<R> {
  const sha256 = await sha256Of(file);
  const created = await post("createUploadURL", { ...fields, size: file.size, sha256 });
  const problem = created.headers.get("content-type")?.startsWith("application/problem+json");
  // 404/405 with a problem that is not the route's own: no such route on this server.
  if ((created.status === 404 || created.status === 405) && problem) {
    const code = ((await created.clone().json()) as { code?: string }).code;
    if (code === "NOT_FOUND" || code === "METHOD_NOT_ALLOWED") throw new DirectUploadUnavailable(created.status);
  }
  if (created.status !== 201) throw await CmsProblem.from(created);
  const ticket = (await created.json()) as Ticket;
  if (ticket.method !== null && ticket.url !== null) {
    const sent = await put(
      new Request(ticket.url, { method: ticket.method, headers: ticket.headers, body: file, signal: o.signal }),
    );
    if (!sent.ok) throw new Error(`the upload URL answered HTTP ${sent.status}: ${(await sent.text()).slice(0, 300)}`);
    await sent.body?.cancel();
  }
  o.onProgress?.(file.size, file.size);
  const done = await post("completeUpload", { uploadId: ticket.uploadId });
  if (done.status !== 201) throw await CmsProblem.from(done);
  return (await done.json()) as R;
}
