/**
 * `cms update <UID> <file>`: a new version of a resource from a file of any size. It locks the
 * resource, sends the file as a resumable (tus) upload whose metadata names the resource, the lock
 * and its owner (the server then replaces the content under updateResource's rules; updateResource
 * itself takes inline content only, CMS_MAX_INLINE_BYTES), with progress, and unlocks, whatever happened.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { Command } from "commander";
import { CmsProblem, type CmsClient, type LockedResourceDTO, type Resource } from "../../client/index.js";
import { progressBar } from "../progress.js";
import { sessionToken } from "../session.js";

/** PATCH size: large enough to keep requests few, small enough that a failed one costs little. */
const CHUNK_BYTES = 16 * 1024 * 1024;
const TUS = { "tus-resumable": "1.0.0" };

export interface UpdateCommandDeps {
  client: () => CmsClient;
  quiet: () => boolean;
  print: (json: unknown, human: string) => void;
}

const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([key, value]) => `${key} ${Buffer.from(value).toString("base64")}`)
    .join(",");

async function tusFetch(url: string, init: RequestInit & { duplex?: "half" }): Promise<Response> {
  const token = await sessionToken();
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(TUS)) headers.set(name, value);
  if (token) headers.set("authorization", `Bearer ${token}`);
  const res = await fetch(url, { ...init, headers });
  if (!res.ok) throw await CmsProblem.from(res);
  return res;
}

/** Sends `file` as the new content of the locked resource; the last PATCH answers the updated resource. */
export async function uploadNewVersion(
  client: CmsClient,
  locked: LockedResourceDTO,
  file: string,
  onProgress: (sent: number, total: number) => void,
): Promise<Resource> {
  const { size } = await stat(file);
  const created = await tusFetch(`${client.baseUrl}/cms/v1.0/uploads`, {
    method: "POST",
    headers: {
      "upload-length": String(size),
      "upload-metadata": metadata({ resourceUID: locked.resourceUID, lockID: locked.lockID, author: locked.author }),
    },
  });
  const location = new URL(created.headers.get("location") ?? "", `${client.baseUrl}/`).href;
  let offset = 0;
  let last: Response | undefined;
  while (offset < size || last === undefined) {
    const end = Math.min(offset + CHUNK_BYTES, size);
    // Streamed from disk: a chunk is never held whole.
    const body = end > offset ? (createReadStream(file, { start: offset, end: end - 1 }) as unknown as BodyInit) : "";
    last = await tusFetch(location, {
      method: "PATCH",
      headers: {
        "content-type": "application/offset+octet-stream",
        "upload-offset": String(offset),
        "content-length": String(end - offset),
      },
      body,
      duplex: "half",
    });
    offset = end;
    onProgress(offset, size);
  }
  return (await last.json()) as Resource;
}

export function registerUpdate(program: Command, deps: UpdateCommandDeps) {
  program
    .command("update")
    .description("upload a new version of a resource from a file of any size (lock, send with progress, unlock)")
    .argument("<uid>", "resource UID")
    .argument("<file>", "the new content")
    .action(async (uid: string, file: string) => {
      const client = deps.client();
      const locked = await client.lock(uid);
      const bar = progressBar("update", deps.quiet());
      try {
        const updated = await uploadNewVersion(client, locked, file, (sent, total) => bar.update(sent, total));
        bar.stop();
        deps.print(updated, `${updated.resourceURI}  ${updated.size} bytes  sha256 ${updated.sha256}`);
      } finally {
        bar.stop();
        await client.unlock(locked).catch(() => undefined); // the answer above is what matters
      }
    });
}
