// The link signer with each HMAC it is given: Web Crypto's (Workers) and node:crypto's (the Node and
// Bun hosts, runtime/host/hmac.ts). Instances of both kinds may share one CMS_LINK_SECRET, so a link
// one signs must verify on the other, and both must be HMAC-SHA256 itself.
import { describe, expect, it } from "vitest";
import { createLinkSigner } from "../../src/auth/signed-links.js";
import { type HmacOf, webCryptoHmac } from "../../src/lib/hmac.js";
import { nodeHmac } from "../../src/runtime/host/hmac.js";

const SECRET = "a-link-secret-of-some-length-0123456789";
const PATH = "/cms/v1.0/getData/01m8nswg9zrrcd2wwz5n7h9s38v5ry-t/s.bin";
const NOW = 1_800_000_000;
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const signatureOf = (query: string) => new URLSearchParams(query).get("signature") ?? "";

const hmacs: [string, HmacOf][] = [
  ["Web Crypto", webCryptoHmac],
  ["node:crypto", nodeHmac],
];

describe.each(hmacs)("the link signer on %s's HMAC", (_, hmacOf) => {
  it("computes HMAC-SHA256 (RFC 4231, test case 2)", async () => {
    const hmac = await hmacOf(new TextEncoder().encode("Jefe"));
    const mac = await hmac(new TextEncoder().encode("what do ya want for nothing?"));
    expect(hex(mac)).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  });

  it("verifies its own link until it expires, and nothing else", async () => {
    const signer = await createLinkSigner(SECRET, hmacOf);
    const query = await signer.sign(PATH, NOW + 60);
    const signature = signatureOf(query);
    expect(query).toMatch(/^expires=1800000060&signature=[A-Za-z0-9_-]{43}$/);
    expect(await signer.verify(PATH, String(NOW + 60), signature, NOW)).toBe(true);
    expect(await signer.verify(PATH, String(NOW + 60), signature, NOW + 60)).toBe(false); // expired
    expect(await signer.verify(`${PATH}x`, String(NOW + 60), signature, NOW)).toBe(false); // another path
    expect(await signer.verify(PATH, String(NOW + 61), signature, NOW)).toBe(false); // a moved expiry
    const last = signature.at(-1) === "A" ? "Q" : "A"; // another value of the last character's used bits
    expect(await signer.verify(PATH, String(NOW + 60), `${signature.slice(0, -1)}${last}`, NOW)).toBe(false);
    expect(await signer.verify(PATH, String(NOW + 60), signature.slice(1), NOW)).toBe(false); // too short
    const other = await createLinkSigner(`${SECRET}!`, hmacOf);
    expect(await other.verify(PATH, String(NOW + 60), signature, NOW)).toBe(false); // another secret
  });
});

describe("links between runtimes sharing one secret", () => {
  it("a link either HMAC signs verifies on the other, with the same signature", async () => {
    const [web, node] = await Promise.all([
      createLinkSigner(SECRET, webCryptoHmac),
      createLinkSigner(SECRET, nodeHmac),
    ]);
    const fromWeb = await web.sign(PATH, NOW + 3600);
    const fromNode = await node.sign(PATH, NOW + 3600);
    expect(fromNode).toBe(fromWeb);
    expect(await node.verify(PATH, String(NOW + 3600), signatureOf(fromWeb), NOW)).toBe(true);
    expect(await web.verify(PATH, String(NOW + 3600), signatureOf(fromNode), NOW)).toBe(true);
  });

  it("node:crypto's answers in the same call: no MAC waits on a thread pool", async () => {
    const hmac = await nodeHmac(new TextEncoder().encode(SECRET));
    const mac = hmac(new TextEncoder().encode(PATH));
    expect(mac).toBeInstanceOf(Uint8Array);
    expect(mac).not.toBeInstanceOf(Promise);
    expect(hex(mac as Uint8Array)).toBe(
      hex(await (await webCryptoHmac(new TextEncoder().encode(SECRET)))(new TextEncoder().encode(PATH))),
    );
  });
});
