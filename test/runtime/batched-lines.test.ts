/** The batched log writer: one write per event-loop turn, in order, nothing lost on flush. */
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { batchedLines } from "../../src/runtime/node/batched-lines.js";

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
    await nextTurn();
    expect(texts).toEqual(['{"n":1}\n{"n":2}\n']);
    out.line('{"n":3}');
    await nextTurn();
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
    await nextTurn();
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
    await nextTurn();
    out.line("SECOND");
    await nextTurn();
    expect(chunks.map((c) => Buffer.from(c).toString())).toEqual(["first\n", "SECOND\n"]);
  });

  it("flush writes what is pending (for process exit) and nothing twice", async () => {
    const { write, texts } = recorder();
    const out = batchedLines(write);
    out.line("last words");
    out.flush();
    expect(texts).toEqual(["last words\n"]);
    await nextTurn();
    out.flush();
    expect(texts).toEqual(["last words\n"]);
  });
});
