/**
 * The runtime-free half of image derivatives: a runtime without a transformer (Workers without an
 * Images binding) answers 501, and the work limit refuses past its queue with 503 + Retry-After.
 * The memory blob store is the real driver Workers tests use; no transformer is mocked.
 */
import { describe, expect, it } from "vitest";
import { createImageDerivatives } from "../../src/images/derivatives.js";
import { createWorkLimit } from "../../src/images/limit.js";
import { domainProblem } from "../../src/http/domain-problems.js";
import { ImageError } from "../../src/images/errors.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";

const source = {
  blobKey: `t/${"a".repeat(32)}/ab/cd/${"ab".repeat(32)}`,
  size: 10,
  sha256: "ab".repeat(32),
  mediaType: "image/png",
  name: "a.png",
  updatedAt: 0,
};

describe("image derivatives without a transformer, and under load", () => {
  it("no transformer: 501 TRANSFORM_UNAVAILABLE; no parameters: plain getData (null)", async () => {
    const images = createImageDerivatives({ blobs: createMemoryBlobStore(), transformer: undefined });
    expect(images.requested(() => undefined)).toBeNull();
    const request = images.requested((name) => (name === "width" ? "10" : undefined))!;
    const refused = await images.derive(source, request, "").catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ImageError);
    expect(domainProblem(refused)?.status).toBe(501);
    expect(domainProblem(refused)?.code).toBe("TRANSFORM_UNAVAILABLE");
  });

  it("past its slots and queue the work limit answers 503 with Retry-After", async () => {
    const limit = createWorkLimit(1, 1);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const running = limit.run(() => held);
    const queued = limit.run(async () => "queued ran");
    const refused = await limit.run(async () => "never").catch((err: unknown) => err);
    expect(domainProblem(refused)?.status).toBe(503);
    expect(domainProblem(refused)?.headers?.["retry-after"]).toBe("1");
    release();
    await running;
    expect(await queued).toBe("queued ran");
    expect(await limit.run(async () => "free again")).toBe("free again");
  });

  it("counts waiting in the time limit: a wait past it is refused with 503 + Retry-After, never run late", async () => {
    const limit = createWorkLimit(1, 4, 40);
    let release!: () => void;
    const running = limit.run(() => new Promise<void>((resolve) => (release = resolve)));
    let ran = false;
    const started = Date.now();
    const waited = await limit
      .run(async () => {
        ran = true;
      })
      .catch((err: unknown) => err);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(domainProblem(waited)?.status).toBe(503);
    expect(domainProblem(waited)?.headers?.["retry-after"]).toBeDefined();
    release();
    await running;
    expect(ran).toBe(false);
    // The refused waiter left the queue: the slot is free for the next request at once.
    expect(await limit.run(async () => "free again")).toBe("free again");
  });

  it("keeps a slot its work holds past its answer until that settles (libvips still encoding)", async () => {
    const limit = createWorkLimit(1, 4);
    let stop!: () => void;
    const encoding = new Promise<void>((resolve) => (stop = resolve));
    // Answered at once (a 503 past the deadline), but the library has not stopped yet.
    const answered = await limit.run(async (hold) => {
      hold(encoding);
      return "503 answered";
    });
    expect(answered).toBe("503 answered");
    let next = false;
    const waiting = limit.run(async () => {
      next = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(next).toBe(false); // the held slot is not reused
    stop();
    await waiting;
    expect(next).toBe(true);
  });

  it("shares slots fairly: a caller flooding the queue leaves room for another, whose work runs next", async () => {
    const limit = createWorkLimit(1, 4);
    const link = { tenant: "acme", caller: "link:abc" };
    const user = { tenant: "acme", caller: "user:ann" };
    const order: string[] = [];
    let release!: () => void;
    const running = limit.run(() => new Promise<void>((resolve) => (release = resolve)), link);
    const queued = [1, 2, 3, 4].map((n) => limit.run(async () => void order.push(`link ${n}`), link));
    // The link's own queue is full: its next is refused, the user's is not.
    const refused = await limit.run(async () => "never", link).catch((err: unknown) => err);
    expect(domainProblem(refused)?.status).toBe(503);
    const thumb = limit.run(async () => void order.push("user"), user);
    release();
    await Promise.all([running, thumb, ...queued]);
    expect(order[0]).toBe("user"); // not behind the link's four
    expect(order).toHaveLength(5);
  });

  it("a freed slot goes to the tenant with the fewest running, then the one served longest ago", async () => {
    const limit = createWorkLimit(2, 8);
    const releases: (() => void)[] = [];
    const hold = (asker: { tenant: string; caller: string }, name: string, order: string[]) =>
      limit.run(async () => {
        order.push(name);
        await new Promise<void>((resolve) => releases.push(resolve));
      }, asker);
    const order: string[] = [];
    const a = { tenant: "a", caller: "a1" };
    const b = { tenant: "b", caller: "b1" };
    const all = [
      hold(a, "a1", order),
      hold(a, "a2", order),
      hold(a, "a3", order),
      hold(a, "a4", order),
      hold(b, "b1", order),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(["a1", "a2"]);
    releases.shift()!(); // a1 done: b (none running) goes before a3
    await expect.poll(() => order).toEqual(["a1", "a2", "b1"]);
    releases.shift()!();
    await expect.poll(() => order).toEqual(["a1", "a2", "b1", "a3"]);
    while (releases.length || order.length < 5) {
      await expect.poll(() => releases.length).toBeGreaterThan(0);
      releases.shift()!();
    }
    await Promise.all(all);
    expect(order).toEqual(["a1", "a2", "b1", "a3", "a4"]);
  });
});
