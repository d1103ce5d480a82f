/**
 * A user's search text → an FTS5 MATCH expression built here, token by token, so no character of
 * `q` is ever FTS5 syntax: words are ANDed, `"a phrase"` is a phrase, a trailing `*` makes a word a
 * prefix. Every term goes in as an FTS5 string (double quotes, inner quotes doubled), which FTS5
 * tokenizes itself (unicode61: case and accents folded), so AND/OR/NOT/NEAR, `:`, `^`, `(` or `-`
 * in `q` are only text. Bounded: the length of `q`, the number of terms and the prefix length.
 */

export const MAX_QUERY_LENGTH = 200;
export const MAX_QUERY_TERMS = 8;
/** `a*` would walk the postings of every word starting with a; the index keeps 2- and 3-letter prefixes. */
export const MIN_PREFIX_LENGTH = 2;

export interface SearchTerm {
  text: string;
  phrase: boolean;
  prefix: boolean;
}

export class SearchQueryError extends Error {}

const SEARCHABLE = /[\p{L}\p{N}]/u;

/** An FTS5 string: the text between double quotes, each inner quote doubled (FTS5's only escape). */
export const ftsString = (text: string): string => `"${text.replaceAll('"', '""')}"`;

/** The terms of `q`, or a SearchQueryError saying what is wrong with it. */
export function searchTerms(q: string): SearchTerm[] {
  if ([...q].length > MAX_QUERY_LENGTH) throw new SearchQueryError(`must be at most ${MAX_QUERY_LENGTH} characters`);
  const terms: SearchTerm[] = [];
  for (const match of q.matchAll(/"([^"]*)"|(\S+)/g)) {
    const phrase = match[1] !== undefined;
    const raw = phrase ? (match[1] as string) : (match[2] as string).replaceAll('"', "");
    const prefix = !phrase && raw.endsWith("*");
    const text = (prefix ? raw.replace(/\*+$/, "") : raw).trim();
    // Only punctuation: FTS5 would find no token in it.
    if (!SEARCHABLE.test(text)) continue;
    if (prefix && [...text].length < MIN_PREFIX_LENGTH)
      throw new SearchQueryError(`a prefix (word*) needs at least ${MIN_PREFIX_LENGTH} characters before the *`);
    terms.push({ text, phrase, prefix });
  }
  if (terms.length === 0) throw new SearchQueryError("has no word to search for");
  if (terms.length > MAX_QUERY_TERMS)
    throw new SearchQueryError(`must have at most ${MAX_QUERY_TERMS} words or phrases`);
  return terms;
}

/** The MATCH expression of the terms: every one must match (AND). */
export const matchExpression = (terms: SearchTerm[]): string =>
  terms.map((t) => `${ftsString(t.text)}${t.prefix ? "*" : ""}`).join(" AND ");

/**
 * A necessary condition for a tag, as MATCH expression on the `tags` column: its words as a phrase
 * (the exact, case-folded comparison is made on the row); null when it has no word.
 */
export const tagCondition = (tag: string): string | null => (SEARCHABLE.test(tag) ? `tags : ${ftsString(tag)}` : null);
