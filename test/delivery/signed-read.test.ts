// What a runtime's fast path accepts as a signed link (delivery/signed-read.ts): exactly what the read
// guard would let through, or nothing (the app then answers, its guard with 403 for a bad link).
import { describe, expect, it } from "vitest";
import { createLinkSigner, type LinkSigner } from "../../src/auth/signed-links.js";
import { signedRead } from "../../src/delivery/signed-read.js";
import { webCryptoHmac } from "../../src/lib/hmac.js";
import { nodeHmac } from "../../src/runtime/host/hmac.js";

const SECRET = "a-link-secret-of-at-least-32-characters!";
const PATH = "/cms/v1.0/getData/01abc-t/docs/a.txt";
const VERSION = "0123456789abcdef";
const NOW = 1_800_000_000;
const clock = () => new Date(NOW * 1000);
const settings = { publicRead: false, maxAge: 0, staleWhileRevalidate: 0 };

async function signer(): Promise<LinkSigner> {
  return createLinkSigner(SECRET, nodeHmac);
}

describe("signedRead", () => {
  it("accepts a valid link, with its remaining lifetime as the Cache-Control", async () => {
    const links = await signer();
    const query = await links.sign(PATH, NOW + 600);
    expect(signedRead({ links, clock }, settings, PATH, query)).toStrictEqual({
      version: undefined,
      image: undefined,
      cache: { "cache-control": "private, max-age=600" },
    });
  });

  it("accepts a versioned link with its `v`, in either order, and reads that version under the link's Cache-Control", async () => {
    const links = await signer();
    const query = await links.sign(`${PATH}?v=${VERSION}`, NOW + 60);
    const expected = { version: VERSION, image: undefined, cache: { "cache-control": "private, max-age=60" } };
    expect(signedRead({ links, clock }, settings, PATH, `v=${VERSION}&${query}`)).toStrictEqual(expected);
    expect(signedRead({ links, clock }, settings, PATH, `${query}&v=${VERSION}`)).toStrictEqual(expected);
    // The same link without its `v` signs another text: refused.
    expect(signedRead({ links, clock }, settings, PATH, query)).toBeNull();
  });

  it("leaves to the app whatever the guard must judge", async () => {
    const links = await signer();
    const query = await links.sign(PATH, NOW + 600);
    const [expires, signature] = query.split("&") as [string, string];
    const tampered = `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`;
    const refused = [
      ["another path", `${PATH}x`, query],
      ["a dot segment", "/cms/v1.0/getData/01abc-t/docs/./a.txt", query],
      ["a changed signature", PATH, `${expires}&${tampered}`],
      ["a later expiry", PATH, `expires=${NOW + 601}&${signature}`],
      ["no signature", PATH, expires],
      ["no expiry", PATH, signature],
      ["a name twice", PATH, `${query}&${expires}`],
      ["an image parameter (presets only, the route checks)", PATH, `${query}&preset=thumb`],
      ["another name", PATH, `${query}&x=1`],
      ["an escape", PATH, `${query}&v=%30`],
      ["a malformed v", PATH, `${query}&v=xyz`],
    ] as const;
    for (const [what, path, text] of refused) {
      expect(signedRead({ links, clock }, settings, path, text), what).toBeNull();
    }
  });

  it("refuses an expired link", async () => {
    const links = await signer();
    const query = await links.sign(PATH, NOW);
    expect(signedRead({ links, clock }, settings, PATH, query)).toBeNull();
    expect(signedRead({ links, clock: () => new Date((NOW - 1) * 1000) }, settings, PATH, query)).not.toBeNull();
  });

  it("answers nothing with a signer that cannot verify in the call (Web Crypto: the app's guard does)", async () => {
    const links = await createLinkSigner(SECRET, webCryptoHmac);
    const query = await links.sign(PATH, NOW + 600);
    expect(
      links.verifyNow(PATH, ...(query.split("&").map((p) => p.split("=")[1]) as [string, string]), NOW),
    ).toBeNull();
    expect(signedRead({ links, clock }, settings, PATH, query)).toBeNull();
    expect(await links.verify(PATH, ...(query.split("&").map((p) => p.split("=")[1]) as [string, string]), NOW)).toBe(
      true,
    );
  });
});
