/**
 * File transfers of the CLI. `get` keeps an interrupted download as `<file>.part` with its ETag in
 * `<file>.part.json`; the next run hashes what is there and asks only for the rest (Range +
 * If-Range), then verifies the whole file against the Repr-Digest (else the ETag) before renaming it into place.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { ChecksumMismatch, type CmsClient, Sha256 } from "../client/index.js";
import { progressBar } from "./progress.js";

export interface TransferOptions {
  quiet: boolean;
  /** Bytes per second at most (like curl's --limit-rate); 0 = unlimited. */
  limitRate?: number;
}

/** Passes bytes on no faster than `rate` per second. */
function throttle(rate: number): Transform {
  const started = Date.now();
  let sent = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      sent += chunk.length;
      const due = started + (sent / rate) * 1000 - Date.now();
      setTimeout(() => done(null, chunk), Math.max(due, 0));
    },
  });
}

const nodeStream = (body: ReadableStream<Uint8Array>) => Readable.fromWeb(body as WebReadableStream<Uint8Array>);

async function hashFile(file: string): Promise<Sha256> {
  const hash = new Sha256();
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash;
}

async function partialOf(part: string): Promise<{ offset: number; etag?: string; hash?: Sha256 }> {
  try {
    const { etag } = JSON.parse(await readFile(`${part}.json`, "utf8")) as { etag: string };
    const { size } = await stat(part);
    return { offset: size, etag, hash: await hashFile(part) };
  } catch {
    return { offset: 0 };
  }
}

export async function getToFile(client: CmsClient, resource: string, out: string, o: TransferOptions) {
  const part = `${out}.part`;
  const held = await partialOf(part);
  const bar = progressBar("get", o.quiet);
  try {
    const dl = await client.download(resource, { ...held, onProgress: (n, total) => bar.update(n, total) });
    await writeFile(`${part}.json`, JSON.stringify({ etag: dl.etag }));
    const sink = createWriteStream(part, { flags: dl.start > 0 ? "a" : "w" });
    const written = o.limitRate
      ? pipeline(nodeStream(dl.body), throttle(o.limitRate), sink)
      : pipeline(nodeStream(dl.body), sink);
    await written.catch(async (err) => {
      // Corrupt bytes must not be resumed from: start over next time.
      if (err instanceof ChecksumMismatch) await rm(part, { force: true });
      throw err;
    });
    await rename(part, out);
    await rm(`${part}.json`, { force: true });
    return { file: out, size: dl.size, sha256: dl.sha256, resumedFrom: dl.start, received: dl.size - dl.start };
  } finally {
    bar.stop();
  }
}

export async function getToStdout(client: CmsClient, resource: string) {
  const dl = await client.download(resource);
  await pipeline(nodeStream(dl.body), process.stdout);
  return { size: dl.size, sha256: dl.sha256 };
}

export async function putFile(
  client: CmsClient,
  file: string,
  fields: Parameters<CmsClient["upload"]>[0],
  o: TransferOptions,
) {
  const { size } = await stat(file);
  const bar = progressBar("put", o.quiet);
  try {
    const body = Readable.toWeb(createReadStream(file)) as unknown as ReadableStream<Uint8Array>;
    return await client.upload(fields, body, { size, onProgress: (n, total) => bar.update(n, total) });
  } finally {
    bar.stop();
  }
}
