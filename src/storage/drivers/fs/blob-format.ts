/** The on-disk blob file format of the fs driver. */
/**
 * Every blob file starts with this fixed-length header line holding the content's SHA-256, written
 * at put time. Keeping the hash inside the file (rather than a sidecar or the key) means it is
 * replaced by the same atomic rename as the content, works for any key, and costs one small read.
 * The content follows at byte HEADER_LENGTH; file size minus HEADER_LENGTH is the blob size.
 */
export const HEADER_PREFIX = "crs-blob/1 sha256=";
/**
 * The same header for a blob put with `durable: false` (a cache's write): renamed into place before
 * its bytes reached the disk, so a crash of the machine may leave it cut short or zeroed. Whoever
 * opens one it did not write checks its bytes against the hash first (fs.ts `#open`).
 */
export const LAZY_HEADER_PREFIX = "crs-lazy/1 sha256=";
export const HEADER_LENGTH = HEADER_PREFIX.length + 64 + 1; // prefix, hex digest, "\n"
