/**
 * `cms put` of a file by createUploadURL (docs/direct-storage.md): the bytes go straight to the
 * bucket (or to the service on stores without presigned URLs), the service only signs and checks.
 * Used when the server offers it unless --no-direct; --direct refuses the fallback. A --type is
 * stored as given only by the streamed upload (a direct upload's type is checked against the bytes),
 * so with --type the file is streamed unless --direct asks otherwise.
 */
import { openAsBlob } from "node:fs";
import { stat } from "node:fs/promises";
import { type CmsClient, DirectUploadUnavailable } from "../client/index.js";
import { progressBar } from "./progress.js";
import { putFile, type TransferOptions } from "./transfer.js";

type Fields = Parameters<CmsClient["upload"]>[0] & { resourceName: string };

export async function putFileDirectOrStreamed(
  client: CmsClient,
  file: string,
  fields: Fields,
  o: TransferOptions & { direct?: boolean },
) {
  if (o.direct === false || (o.direct === undefined && fields.resourceMediaType))
    return putFile(client, file, fields, o);
  await stat(file); // a missing file fails as every other command's does (ENOENT), before any request
  const bar = progressBar("put", o.quiet);
  try {
    const { fileType, resourceMediaType, ...named } = fields;
    const type = resourceMediaType ?? fileType;
    return await client.uploadDirect(
      { ...named, ...(type ? { resourceMediaType: type } : {}) },
      await openAsBlob(file),
      {
        onProgress: (n, total) => bar.update(n, total),
      },
    );
  } catch (err) {
    if (!(err instanceof DirectUploadUnavailable) || o.direct === true) throw err;
  } finally {
    bar.stop();
  }
  return putFile(client, file, fields, o);
}
