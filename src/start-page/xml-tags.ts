/**
 * A tiny, tolerant XML tag scanner: start and end tags with attributes, nothing else. Comments,
 * CDATA, processing instructions and the DOCTYPE (internal subset included) are skipped, so no
 * entity is ever defined or expanded; only the five predefined entities and character references
 * are decoded in attribute values. Linear time; malformed input ends the scan instead of throwing.
 */

export interface XmlTag {
  kind: "start" | "end";
  /** The qualified name as written (`adlcp:location`). */
  name: string;
  /** Lowercased local name without prefix, for tolerant matching (`location`). */
  local: string;
  /** Attributes by qualified name as written; empty for end tags. */
  attributes: Map<string, string>;
  selfClosing: boolean;
}

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|lt|gt|amp|quot|apos);/g, (whole, ref: string) => {
    if (!ref.startsWith("#")) return PREDEFINED[ref] ?? whole;
    const code = ref[1] === "x" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

export const localName = (qualified: string) => qualified.slice(qualified.indexOf(":") + 1).toLowerCase();

const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\n" || c === "\r";
const endsName = (c: string | undefined) =>
  c === undefined || isSpace(c) || c === "/" || c === ">" || c === "=" || c === "<";

/** Skips `<!DOCTYPE …>` or another `<!…>` declaration, honouring quotes, comments and `[…]`. */
function skipDeclaration(text: string, from: number): number {
  let depth = 0;
  for (let i = from + 2; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      const close = text.indexOf(c, i + 1);
      if (close < 0) return text.length;
      i = close;
    } else if (c === "<" && text.startsWith("<!--", i)) {
      const close = text.indexOf("-->", i + 4);
      if (close < 0) return text.length;
      i = close + 2;
    } else if (c === "[") depth++;
    else if (c === "]") depth = Math.max(0, depth - 1);
    else if (c === ">" && depth === 0) return i + 1;
  }
  return text.length;
}

/** Index just past `marker` after `from`, or the end of text if it never comes. */
const skipPast = (text: string, from: number, marker: string) => {
  const at = text.indexOf(marker, from);
  return at < 0 ? text.length : at + marker.length;
};

export function* xmlTags(text: string): Generator<XmlTag> {
  let i = 0;
  while (i < text.length) {
    const lt = text.indexOf("<", i);
    if (lt < 0) return;
    if (text.startsWith("<!--", lt)) i = skipPast(text, lt + 4, "-->");
    else if (text.startsWith("<![CDATA[", lt)) i = skipPast(text, lt + 9, "]]>");
    else if (text.startsWith("<?", lt)) i = skipPast(text, lt + 2, "?>");
    else if (text.startsWith("<!", lt)) i = skipDeclaration(text, lt);
    else {
      const closing = text[lt + 1] === "/";
      let j = closing ? lt + 2 : lt + 1;
      const nameStart = j;
      while (!endsName(text[j])) j++;
      const name = text.slice(nameStart, j);
      const attributes = new Map<string, string>();
      let selfClosing = false;
      for (;;) {
        while (isSpace(text[j])) j++;
        const c = text[j];
        if (c === undefined || c === "<") break; // unterminated tag: resume at the next "<"
        if (c === ">") {
          j++;
          break;
        }
        if (c === "/") {
          selfClosing = text[j + 1] === ">";
          j += selfClosing ? 2 : 1;
          if (selfClosing) break;
          continue;
        }
        const attrStart = j;
        while (!endsName(text[j])) j++;
        const attr = text.slice(attrStart, j);
        if (attr === "") {
          j++; // a stray "=": step over it so the scan always advances
          continue;
        }
        while (isSpace(text[j])) j++;
        let value = "";
        if (text[j] === "=") {
          j++;
          while (isSpace(text[j])) j++;
          const quote = text[j];
          if (quote === '"' || quote === "'") {
            const close = text.indexOf(quote, j + 1);
            const end = close < 0 ? text.length : close;
            value = text.slice(j + 1, end);
            j = end + 1;
          } else {
            const valueStart = j;
            while (text[j] !== undefined && !isSpace(text[j]) && text[j] !== ">") j++;
            value = text.slice(valueStart, j);
          }
        }
        if (!closing && !attributes.has(attr)) attributes.set(attr, decodeEntities(value));
      }
      i = Math.max(j, lt + 1);
      if (name !== "") yield { kind: closing ? "end" : "start", name, local: localName(name), attributes, selfClosing };
    }
  }
}
