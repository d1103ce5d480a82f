import { describe, expect, it } from "vitest";
import { contentDisposition } from "../../src/http/content-disposition.js";

/** Decodes the RFC 8187 `filename*` parameter, as a client would. */
function extFilename(header: string): string | undefined {
  const match = /filename\*=UTF-8''([^;\s]*)/.exec(header);
  return match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
}

/** Unquotes the `filename` quoted-string. */
function fallbackFilename(header: string): string | undefined {
  const match = /filename="((?:[^"\\]|\\.)*)"/.exec(header);
  return match?.[1]?.replace(/\\(.)/g, "$1");
}

describe("contentDisposition", () => {
  it("uses only a quoted filename for a plain ASCII token name", () => {
    expect(contentDisposition("report.pdf")).toBe('inline; filename="report.pdf"');
  });

  it("supports attachment", () => {
    expect(contentDisposition("report.pdf", "attachment")).toBe('attachment; filename="report.pdf"');
  });

  it("adds filename* for a name with spaces, keeping the fallback readable", () => {
    const header = contentDisposition("my report.pdf");
    expect(header).toBe(`inline; filename="my report.pdf"; filename*=UTF-8''my%20report.pdf`);
  });

  it("encodes unicode names in filename* and degrades the fallback to ASCII", () => {
    const header = contentDisposition("café résumé.pdf");
    expect(fallbackFilename(header)).toBe("cafe resume.pdf");
    expect(header).toContain("filename*=UTF-8''caf%C3%A9%20r%C3%A9sum%C3%A9.pdf");
    expect(extFilename(header)).toBe("café résumé.pdf");
  });

  it("replaces each non-ASCII code point (including astral ones) with one underscore in the fallback", () => {
    const header = contentDisposition("日本語 📄.txt");
    expect(fallbackFilename(header)).toBe("___ _.txt");
    expect(extFilename(header)).toBe("日本語 📄.txt");
  });

  it("escapes quotes and backslashes in the fallback", () => {
    const header = contentDisposition('say "hi"\\now.txt');
    expect(header).toContain('filename="say \\"hi\\"\\\\now.txt"');
    expect(fallbackFilename(header)).toBe('say "hi"\\now.txt');
    expect(header).toContain("filename*=UTF-8''say%20%22hi%22%5Cnow.txt");
  });

  it("never emits CR, LF or other control characters", () => {
    const header = contentDisposition("evil\r\nSet-Cookie: a=b\u0000\u007f\u0085.txt");
    expect(header).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(fallbackFilename(header)).toBe("evil__Set-Cookie: a=b___.txt");
    expect(extFilename(header)).toBe("evil__Set-Cookie: a=b___.txt");
    // It must be acceptable to the Fetch Headers class, which rejects header injection.
    expect(new Headers({ "content-disposition": header }).get("content-disposition")).toBe(header);
  });

  it("never sends a bidirectional control (a name stored before they were refused would display as another)", () => {
    const header = contentDisposition("invoice\u202Efdp.exe", "attachment");
    expect(header).toBe('attachment; filename="invoice_fdp.exe"');
    expect(extFilename(contentDisposition("è\u2067a.txt"))).toBe("è_a.txt");
    expect(extFilename(contentDisposition("שלום.txt"))).toBe("שלום.txt");
  });

  it("percent-encodes RFC 8187 non-attr-chars that encodeURIComponent would leave alone", () => {
    const header = contentDisposition("a*b'c(d).txt");
    expect(header).toContain("filename*=UTF-8''a%2Ab%27c%28d%29.txt");
    expect(extFilename(header)).toBe("a*b'c(d).txt");
  });

  it("keeps %XX sequences out of the fallback (RFC 6266 App. D) but exact in filename*", () => {
    const header = contentDisposition("100%41.txt");
    expect(fallbackFilename(header)).toBe("100_41.txt");
    expect(extFilename(header)).toBe("100%41.txt");
  });

  it("emits only printable ASCII overall", () => {
    for (const name of ["ä", "\uD800lone", "tab\there", "név.txt", "a;b=c.txt"]) {
      expect(contentDisposition(name), name).toMatch(/^[\x20-\x7e]+$/);
    }
  });

  it("keeps parameter delimiters inside the quoted fallback", () => {
    const header = contentDisposition("a;b=c.txt");
    expect(fallbackFilename(header)).toBe("a;b=c.txt");
    expect(extFilename(header)).toBe("a;b=c.txt");
  });

  it("omits the parameter for an empty name", () => {
    expect(contentDisposition("")).toBe("inline");
  });
});
