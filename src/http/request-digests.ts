/**
 * A request's own digest fields (RFC 9530 `Content-Digest` / `Repr-Digest`) against its content: we
 * check SHA-256 and SHA-512 (clients and proxies send either); other algorithms are ignored as §4
 * allows. They are checked wherever a request's content is read (request-digest.ts, the upload and
 * tus routes), never silently ignored: a malformed field is a 400, a mismatch a 422, each naming it.
 */
import { parseMember, SHA256_ALGORITHM } from "../lib/digest-fields.js";
import { Sha256 } from "../lib/sha256.js";
import { Sha512 } from "../lib/sha512.js";
import { ProblemError } from "../problems.js";

/** Fields a request may announce its own content's digest in (RFC 9530 §2 and §3). */
const REQUEST_DIGEST_FIELDS = ["content-digest", "repr-digest"] as const;

/** The algorithms a request's own content can be checked against, with a running hash for each. */
const REQUEST_DIGEST_ALGORITHMS = {
  "sha-256": { bytes: 32, hasher: () => new Sha256() },
  "sha-512": { bytes: 64, hasher: () => new Sha512() },
} as const;
export type RequestDigestAlgorithm = keyof typeof REQUEST_DIGEST_ALGORITHMS;

export interface RequestDigest {
  /** The field it came in, e.g. `content-digest`. */
  header: (typeof REQUEST_DIGEST_FIELDS)[number];
  algorithm: RequestDigestAlgorithm;
  /** Lowercase hex. */
  hex: string;
}

/**
 * The digests a request announces for its own content, in `algorithms` (sha-256 unless asked). A
 * malformed field is a 400 naming it; members of other algorithms are left out (§4 lets us ignore them).
 */
export function requestDigests(
  header: (name: string) => string | null | undefined,
  algorithms: readonly RequestDigestAlgorithm[] = [SHA256_ALGORITHM],
): RequestDigest[] {
  const digests: RequestDigest[] = [];
  for (const name of REQUEST_DIGEST_FIELDS) {
    for (const algorithm of algorithms) {
      const parsed = parseMember(header(name), algorithm, REQUEST_DIGEST_ALGORITHMS[algorithm].bytes);
      if (parsed.kind === "malformed") {
        const detail = `must be a digest field whose ${algorithm} member is ${REQUEST_DIGEST_ALGORITHMS[algorithm].bytes} bytes (RFC 9530)`;
        throw new ProblemError("VALIDATION_FAILED", `invalid ${name}: ${detail}`, {
          errors: [{ pointer: `/header/${name}`, detail }],
        });
      }
      if (parsed.kind === "found") digests.push({ header: name, algorithm, hex: parsed.hex });
    }
  }
  return digests;
}

/** Every algorithm a request's content can be checked against (request-digest.ts). */
export const ALL_REQUEST_DIGEST_ALGORITHMS = Object.keys(REQUEST_DIGEST_ALGORITHMS) as RequestDigestAlgorithm[];

/**
 * Hashes content as it passes (`update`, any chunks) with each algorithm `digests` name, once each;
 * `mismatch()` at the end gives the first digest the content does not match, if any.
 */
export function requestDigestChecker(digests: readonly RequestDigest[]) {
  const hashers = new Map(digests.map((d) => [d.algorithm, REQUEST_DIGEST_ALGORITHMS[d.algorithm].hasher()] as const));
  return {
    update(chunk: Uint8Array): void {
      for (const hasher of hashers.values()) hasher.update(chunk);
    },
    mismatch(): RequestDigest | undefined {
      const actual = new Map([...hashers].map(([algorithm, hasher]) => [algorithm, hasher.hex()]));
      return digests.find((d) => d.hex !== actual.get(d.algorithm));
    },
  };
}

/** 422 naming the field whose digest the request's content did not match. */
export function requestDigestMismatch(digest: RequestDigest): ProblemError {
  const detail = `the request content does not hash to its ${digest.header} ${digest.algorithm}`;
  return new ProblemError("DIGEST_MISMATCH", detail, { errors: [{ pointer: `/header/${digest.header}`, detail }] });
}
