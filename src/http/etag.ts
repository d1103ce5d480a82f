/** Entity-tags (RFC 9110 §8.8.3): parsing single tags and lists, strong and weak comparison. */

export interface ETag {
  weak: boolean;
  opaque: string;
}

const ETAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;
// One element of a `#entity-tag` list; empty elements are allowed (§5.6.1). Sticky, so it scans.
const ETAG_ELEMENT = /[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(?:,|$)/y;

export function parseETag(value: string): ETag | undefined {
  const match = ETAG.exec(value.trim());
  return match ? { weak: match[1] !== undefined, opaque: match[2] ?? "" } : undefined;
}

/** `*`, or the list's entity-tags; a malformed list yields no tags (so it matches nothing). */
function parseETagList(value: string): "*" | ETag[] {
  if (value.trim() === "*") return "*";
  const tags: ETag[] = [];
  let index = 0;
  while (index < value.length) {
    ETAG_ELEMENT.lastIndex = index;
    const match = ETAG_ELEMENT.exec(value);
    if (!match || ETAG_ELEMENT.lastIndex === index) return [];
    if (match[2] !== undefined) tags.push({ weak: match[1] !== undefined, opaque: match[2] });
    index = ETAG_ELEMENT.lastIndex;
  }
  return tags;
}

// §8.8.3.2: strong comparison needs both tags strong; weak comparison ignores the W/ flag.
export const strongMatch = (a: ETag, b: ETag) => !a.weak && !b.weak && a.opaque === b.opaque;
export const weakMatch = (a: ETag, b: ETag) => a.opaque === b.opaque;

export function listMatches(value: string, current: ETag, compare: (a: ETag, b: ETag) => boolean): boolean {
  const list = parseETagList(value);
  return list === "*" || list.some((tag) => compare(tag, current));
}

/** Whether an If-None-Match value matches `etag` (a quoted entity-tag): §13.1.2's weak comparison. */
export function ifNoneMatchHits(value: string | null | undefined, etag: string): boolean {
  const current = parseETag(etag);
  return value != null && current !== undefined && listMatches(value, current, weakMatch);
}
