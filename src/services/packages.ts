/**
 * Zip packages (e-learning content): a stored zip is read by ranged reads from its
 * blob, checked (zip slip, bombs, limits) by the package reader, and every file is streamed into its
 * own blob. Nothing is written to the database here: the caller inserts the zip and all its files in
 * one batch, so a failed package leaves no rows, and the blobs stored so far are discarded.
 */
import { ProblemError } from "../problems.js";
import type { IdGenerator } from "../lib/ids.js";
import { mediaTypeForPath } from "../lib/media-types.js";
import type { NewResourceRow } from "../metadata/schema.js";
import { findStartPage } from "../start-page/detect.js";
import { openZip, ZipError, type ZipLimits, type ZipSource } from "../zip/reader.js";
import type { BlobKey, BlobStore } from "../storage/blob-store.js";
import type { ContentService, StoredBlob } from "./content.js";
import { toUid } from "./resource-ids.js";

export interface PackageServiceDeps {
  blobs: BlobStore;
  content: ContentService;
  newShortId: IdGenerator;
  limits: Partial<ZipLimits>;
}

export interface ExplodedPackage {
  /** One row per file (directories are not resources), in the zip's order. */
  files: NewResourceRow[];
  /** Path of the start page: always one of `files`. */
  startPath: string;
}

export type PackageService = ReturnType<typeof createPackageService>;

/** The zip's own row, already stored as a blob but not yet inserted. */
type ZipRow = NewResourceRow & { uid: string; blobKey: string; size: number };

export function createPackageService({ blobs, content, newShortId, limits }: PackageServiceDeps) {
  const sourceOf = (zip: ZipRow): ZipSource => ({
    size: zip.size,
    async read(range) {
      const blob = await blobs.get(zip.blobKey as BlobKey, range);
      if (!blob) throw new Error(`blob ${zip.blobKey} of package ${zip.uid} is missing`);
      return blob.body;
    },
  });

  return {
    /**
     * Reads the package and stores each file. `stored` receives every blob as soon as it exists, so
     * the caller can discard them whatever happens later. Throws a `ZipError` (not a zip, unsafe entry,
     * over a limit, no start page: a 400 at the edge) from `pointer`, a 400 for an entry named as the
     * package, or 413 for a file over the resource size limit.
     */
    async explode(zip: ZipRow, pointer: string, stored: StoredBlob[]): Promise<ExplodedPackage> {
      try {
        const archive = await openZip(sourceOf(zip), limits);
        const startPath = await findStartPage(archive);
        const files: NewResourceRow[] = [];
        for (const entry of archive.entries) {
          if (entry.isDirectory) continue;
          if (entry.path.normalize("NFC") === zip.path.normalize("NFC")) {
            // Both would have the URI `<context>/<path>`.
            throw new ProblemError("VALIDATION_FAILED", `zip entry "${entry.path}" has the package's own name`, {
              errors: [{ pointer: "/body/resourceName", detail: "equals the path of a file inside the zip" }],
            });
          }
          const blob = await content.put(zip.tenantId, archive.open(entry), pointer);
          stored.push(blob);
          const shortId = newShortId();
          files.push({
            uid: toUid(shortId, zip.tenantId),
            shortId,
            tenantId: zip.tenantId,
            context: zip.uid,
            path: entry.path,
            parentUid: zip.uid,
            name: entry.path,
            author: zip.author,
            mediaType: mediaTypeForPath(entry.path),
            externalUri: null,
            size: blob.size,
            sha256: blob.sha256,
            blobKey: blob.key,
            width: blob.width,
            height: blob.height,
            owner: zip.owner,
            ownerIssuer: zip.ownerIssuer,
            createdAt: zip.createdAt,
            updatedAt: zip.updatedAt,
          });
        }
        return { files, startPath };
      } catch (err) {
        // The reader's errors go up as they are (the HTTP edge maps them), told which input the zip came from.
        throw err instanceof ZipError ? err.from(pointer) : err;
      }
    },
  };
}
