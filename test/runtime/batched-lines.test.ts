/** The batched log writer: one write per event-loop turn, in order, nothing lost on flush. */
import { setImmediate as nextTurn } from "node:timers/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createJsonLogger } from "../../src/lib/logger.js";
import { batchedLines } from "../../src/runtime/host/batched-lines.js";

/** A writer that records each write as text, and the chunks themselves. */
function recorder() {
  const chunks: Uint8Array[] = [];
  const texts: string[] = [];
  const write = (chunk: Uint8Array) => {
    chunks.push(chunk);
    texts.push(Buffer.from(chunk).toString("utf8"));
  };
  return { write, chunks, texts };
}

describe("batchedLines", () => {
  it("writes the lines of one turn in a single write, in order, each ending in a newline", async () => {
    const { write, texts } = recorder();
    const out = batchedLines(write);
    out.line('{"n":1}');
    out.line('{"n":2}');
    expect(texts).toEqual([]);
    await out.idle();
    expect(texts).toEqual(['{"n":1}\n{"n":2}\n']);
    out.line('{"n":3}');
    await out.idle();
    expect(texts).toEqual(['{"n":1}\n{"n":2}\n', '{"n":3}\n']);
  });

  it("writes at once when a batch reaches its size limit", () => {
    const { write, texts } = recorder();
    const out = batchedLines(write, 12);
    out.line("12345");
    expect(texts).toEqual([]);
    out.line("67890");
    expect(texts).toEqual(["12345\n67890\n"]);
  });

  it("never writes more than its limit at once, and only whole lines (workers share one stdout pipe)", async () => {
    const { write, texts } = recorder();
    const out = batchedLines(write, 10);
    out.line("12345");
    out.line("67890"); // would make 12 bytes: the first line goes alone
    expect(texts).toEqual(["12345\n"]);
    out.line("a line longer than the limit");
    expect(texts).toEqual(["12345\n", "67890\n", "a line longer than the limit\n"]);
    await out.idle();
    expect(texts.every((w) => w.endsWith("\n"))).toBe(true);
  });

  it("counts the limit in bytes, as a pipe does (PIPE_BUF), not in characters", () => {
    const { write, chunks, texts } = recorder();
    const out = batchedLines(write, 12);
    out.line("ééé"); // 3 characters, 7 bytes with the newline
    out.line("éé"); // 5 more bytes: 12, the limit
    expect(texts).toEqual(["ééé\néé\n"]);
    out.line("日本"); // 7 bytes
    out.line("日本"); // 14 > 12: the first goes alone
    expect(texts.slice(1)).toEqual(["日本\n"]);
    expect(chunks.every((c) => c.byteLength <= 12)).toBe(true);
  });

  it("hands each write its own bytes: a writer that keeps a chunk (an asynchronous stream) never sees it change", async () => {
    const { write, chunks } = recorder();
    const out = batchedLines(write);
    out.line("first");
    await out.idle();
    out.line("SECOND");
    await out.idle();
    expect(chunks.map((c) => Buffer.from(c).toString())).toEqual(["first\n", "SECOND\n"]);
  });

  it("idle() resolves once the pending lines are written, and at once when none are", async () => {
    const { write, texts } = recorder();
    const out = batchedLines(write);
    await out.idle();
    out.line("one");
    let idle = false;
    const waiting = out.idle().then(() => (idle = true));
    await Promise.resolve();
    expect(idle).toBe(false);
    await waiting;
    expect(texts).toEqual(["one\n"]);
    out.line("two");
    const again = out.idle();
    out.flush(); // written before its turn: idle() resolves all the same
    await again;
    expect(texts).toEqual(["one\n", "two\n"]);
  });

  it("flush writes what is pending (for process exit) and nothing twice", async () => {
    const { write, texts } = recorder();
    const out = batchedLines(write);
    out.line("last words");
    out.flush();
    expect(texts).toEqual(["last words\n"]);
    await nextTurn(); // the turn's own flush, scheduled by the line, finds nothing left
    out.flush();
    expect(texts).toEqual(["last words\n"]);
  });
});

// Both ways a line gets into the batch: one string per line (Node), pieces copied as ASCII (Bun).
describe.each([
  { way: "one string per line", copyAscii: false },
  { way: "piece by piece", copyAscii: true },
])("batchedLines as the logger's sink ($way)", ({ copyAscii }) => {
  const time = "2026-11-23T03:00:00.000Z";
  const loggerOver = (limit?: number) => {
    const { write, chunks, texts } = recorder();
    const out = batchedLines(write, limit, { copyAscii });
    const logger = createJsonLogger(out, "info", () => new Date(time));
    return { out, logger, chunks, texts };
  };

  it("writes exactly what JSON.stringify gives for any string, number or boolean field (escapes, non-ASCII, lone surrogates)", () => {
    const { out, logger, texts } = loggerOver();
    const value = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.string({
        unit: fc.constantFrom(
          "a",
          '"',
          "\\",
          "\n",
          "\u0000",
          "\u001f",
          "\u007f",
          "\u0080",
          "\ud800",
          "\udc00",
          "é",
          "日",
          "😀",
          "\u2028",
        ),
      }),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(
        fc.string({ unit: "binary" }),
        fc.dictionary(fc.oneof(fc.stringMatching(/^[a-zA-Zé_"\\]{1,8}$/), fc.constantFrom("time", "msg", "7")), value),
        (msg, fields) => {
          logger.info(msg, fields);
          out.flush();
          expect(texts.at(-1)).toBe(`${JSON.stringify({ time, level: "info", msg, ...fields })}\n`);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("keeps whole lines within its limit: a batch is written before a line that might not fit, a line too long for any batch goes alone", () => {
    const { out, logger, chunks, texts } = loggerOver(512);
    const path = "/cms/v1.0/getData/01m8bnkm26v4qmeg5gqv3hz1s7x5d4-t1/f.bin";
    for (let i = 0; i < 20; i++)
      logger.info("request", { requestId: `id-${i}`, method: "GET", path, status: 200, durationMs: i / 8 });
    logger.info("request", { path: `/${"ü".repeat(300)}` }); // 600 bytes: more than one batch holds
    logger.info("after", { n: 1 });
    out.flush();
    const lines = texts.join("").split("\n").slice(0, -1);
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual([...Array(21).fill("request"), "after"]);
    expect(lines[20]).toBe(JSON.stringify({ time, level: "info", msg: "request", path: `/${"ü".repeat(300)}` }));
    expect(texts.every((t) => t.endsWith("\n"))).toBe(true);
    expect(chunks.filter((c) => c.byteLength > 512).map((c) => Buffer.from(c).toString())).toEqual([`${lines[20]}\n`]);
  });

  it("writes a record that is not flat (objects, errors) as JSON.stringify does, in its place among the others", () => {
    const { out, logger, texts } = loggerOver();
    logger.info("first", { a: 1 });
    logger.warn("nested", { detail: { deep: ["x"] } });
    logger.info("last", { b: "é" });
    out.flush();
    expect(texts.join("")).toBe(
      [
        JSON.stringify({ time, level: "info", msg: "first", a: 1 }),
        JSON.stringify({ time, level: "warn", msg: "nested", detail: { deep: ["x"] } }),
        JSON.stringify({ time, level: "info", msg: "last", b: "é" }),
        "",
      ].join("\n"),
    );
  });
});
