/**
 * Just enough XML for S3 responses: the text of simple elements (`<Key>`, `<UploadId>`, `<Code>`)
 * with entities decoded, and escaping for the one request body we send (CompleteMultipartUpload).
 */

const ENTITY = /&(?:#(\d+)|#x([0-9a-fA-F]+)|(amp|lt|gt|quot|apos));/g;
const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** Decodes the five predefined entities and numeric character references. */
export function unescapeXml(text: string): string {
  return text.replace(ENTITY, (match, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED[name] ?? match;
    const codePoint = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex ?? "", 16);
    return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : match;
  });
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos" }[c]};`);
}

/**
 * The decoded text of every `<tag>…</tag>` holding only text (no child elements), in document
 * order. S3 response elements we read never nest an element of the same name, and their values
 * cannot contain `<` (it is escaped), so a regular expression is exact here.
 */
export function xmlTexts(xml: string, tag: string): string[] {
  const pattern = new RegExp(`<${tag}(?:\\s[^>]*)?>([^<]*)</${tag}>`, "g");
  return Array.from(xml.matchAll(pattern), (m) => unescapeXml(m[1] ?? ""));
}

/** The first `<tag>` text, or undefined. */
export function xmlText(xml: string, tag: string): string | undefined {
  return xmlTexts(xml, tag)[0];
}

/** True when the document's root element is `<name>` (S3 can embed an `<Error>` in a 200 response). */
export function hasRoot(xml: string, name: string): boolean {
  const root = /^\s*(?:<\?xml[^>]*\?>\s*)?<([A-Za-z][\w.-]*)/.exec(xml);
  return root?.[1] === name;
}
