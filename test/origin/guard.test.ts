/**
 * The one SSRF guard (origin/guard.ts) for external URIs and webhook receivers: the same verdicts
 * whoever asks, each problem naming the URL as its caller knows it (no caller rewrites the text).
 */
import { describe, expect, it } from "vitest";
import { createOriginGuard, EXTERNAL_URI, type UrlSubject, WEBHOOK_URL } from "../../src/origin/guard.js";
import { isProblemError } from "../../src/problems.js";

const refusal = (check: () => unknown) => {
  try {
    check();
  } catch (err) {
    if (isProblemError(err)) return err;
    throw err;
  }
  throw new Error("not refused");
};

/** Loopback, private, link-local and localhost hosts, in the spellings WHATWG parsing normalises. */
const NON_PUBLIC = [
  "http://127.0.0.1/",
  "http://2130706433/",
  "http://0x7f.1/",
  "http://0177.0.0.1/",
  "http://127.1/",
  "http://[::1]/",
  "http://[::ffff:127.0.0.1]/",
  "http://10.0.0.1/",
  "http://169.254.169.254/latest/meta-data",
  "http://[fd00::1]/",
  "http://0.0.0.0/",
  "http://localhost/",
  "http://api.localhost./",
];

describe.each([EXTERNAL_URI, WEBHOOK_URL])("the guard for $name", (subject: UrlSubject) => {
  const guard = createOriginGuard({ subject });

  it.each(NON_PUBLIC)("refuses %s before any connection, naming its field", (url) => {
    const problem = refusal(() => guard.checkUrl(url));
    expect(problem.code).toBe("ORIGIN_REFUSED");
    expect(problem.message.startsWith(`${subject.name} host `)).toBe(true);
    expect(problem.message).toContain("CMS_FETCH_ALLOW_PRIVATE");
    expect(problem.errors).toEqual([{ pointer: subject.pointer, detail: problem.message }]);
  });

  it.each([
    ["ftp://example.com/", "scheme ftp: is not allowed"],
    ["http://user:pw@example.com/", "must not contain credentials"],
    ["http://example.com:0/", "port 0 is not allowed"],
    ["not a url", "is not a valid absolute URL"],
  ])("refuses the shape of %s", (url, why) => {
    expect(refusal(() => guard.checkUrl(url)).message.startsWith(`${subject.name} ${why}`)).toBe(true);
  });

  it("allows public hosts, and every host with allowPrivate", () => {
    expect(guard.checkUrl("https://hooks.example.com/x").href).toBe("https://hooks.example.com/x");
    expect(guard.checkUrl("http://8.8.8.8/").hostname).toBe("8.8.8.8");
    const open = createOriginGuard({ subject, allowPrivate: true });
    for (const url of NON_PUBLIC) expect(open.checkUrl(url).protocol).toBe("http:");
  });

  it("checks each address a name resolved to (and the peer)", () => {
    expect(() => guard.checkAddress("hooks.example.com", "93.184.216.34")).not.toThrow();
    const problem = refusal(() => guard.checkAddress("rebound.example.com", "127.0.0.1"));
    expect(problem.message).toMatch(
      new RegExp(`^${subject.name} host rebound\\.example\\.com \\(resolves to 127\\.0\\.0\\.1\\) is not allowed: `),
    );
  });

  it("judges by name where addresses are not seen (Workers): any address literal, private names", () => {
    for (const url of ["http://8.8.8.8/", "http://foo.internal/", "http://intranet/"])
      expect(refusal(() => guard.checkUrlByName(url)).code).toBe("ORIGIN_REFUSED");
    expect(guard.checkUrlByName("https://hooks.example.com/").hostname).toBe("hooks.example.com");
  });
});
