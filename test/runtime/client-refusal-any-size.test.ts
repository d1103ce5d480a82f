/**
 * Issue 25 §3, the typed client's side: a 100 MB streamed upload refused before its file is read
 * (401, 403, 413, 507) rejects with the server's problem — its status and code — never with
 * `TypeError: fetch failed … EPIPE`, and the refusal comes before the whole body was sent. The
 * servers run as processes of their own (test/helpers/refusal-stack.ts).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { CmsProblem, createCmsClient, staticToken } from "../../src/client/index.js";
import { BODY_BYTES, refusalStackPerFile, withServerFigures } from "../helpers/refusal-stack.js";

const { figures, stack } = refusalStackPerFile("typed client, 100 MB streamed upload");

/** `bytes` zero bytes made 64 KiB at a time as they are pulled (never held); `pulled()` counts them. */
function zeros(bytes: number) {
  let made = 0;
  const chunk = new Uint8Array(64 * 1024);
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const n = Math.min(chunk.length, bytes - made);
        made += n;
        controller.enqueue(chunk.slice(0, n));
        if (made >= bytes) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => made };
}

describe("a 100 MB streamed upload refused before its file is read rejects with the server's problem", () => {
  it.each([
    [401, "no token, auth on"],
    [403, "a token without the creator role"],
    [413, "over CMS_MAX_RESOURCE_BYTES"],
    [507, "over the tenant's bytes quota"],
  ] as const)("%i (%s)", async (status, _kind) => {
    const refusal = stack().refusals.find((r) => r.status === status)!;
    const client = createCmsClient({
      baseUrl: refusal.baseUrl,
      ...(refusal.token ? { token: staticToken(refusal.token) } : {}),
    });
    const body = zeros(BODY_BYTES);
    const { result, ms, server } = await withServerFigures(stack(), refusal.baseUrl, () =>
      client
        .upload({ resourceTenantId: refusal.tenant, resourceAuthor: "client" }, body.stream, { size: BODY_BYTES })
        .then(
          () => new Error("the upload was accepted"),
          (err: unknown) => err,
        ),
    );
    expect(result).toBeInstanceOf(CmsProblem);
    expect(result).toMatchObject({ status, problem: { status, code: refusal.code } });
    // Refused before the body was all sent: the size and the quota are checked against its length.
    expect(body.pulled()).toBeLessThan(BODY_BYTES);
    figures.push(
      `  ${status}: ${String(result)}; client sent ${body.pulled()} B, server read ${server?.receivedBytes ?? "?"} B (${server?.outcome ?? "no unread body"}), ${ms} ms`,
    );
  });
});

describe("a refusal without a problem document (a proxy's HTML page)", () => {
  it.each([
    [401, "UNAUTHENTICATED"],
    [413, "PAYLOAD_TOO_LARGE"],
    [507, "INSUFFICIENT_STORAGE"],
  ] as const)("%i still names its status's code: %s", async (status, code) => {
    // A stand-in for a proxy in front of the service: it answers HTML, not problem+json.
    const proxy = createServer((req, res) => {
      req.resume();
      res.writeHead(status, { "content-type": "text/html" }).end("<h1>no</h1>");
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const client = createCmsClient({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
      const err = await client
        .upload({ resourceTenantId: "acme", resourceAuthor: "client" }, new Blob(["x"]))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CmsProblem);
      expect(err).toMatchObject({ status, problem: { status, code } });
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
