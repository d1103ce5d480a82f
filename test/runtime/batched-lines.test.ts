/** The batched log writer: one write per event-loop turn, in order, nothing lost on flush. */
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { batchedLines } from "../../src/runtime/node/batched-lines.js";

describe("batchedLines", () => {
  it("writes the lines of one turn in a single write, in order, each ending in a newline", async () => {
    const writes: string[] = [];
    const out = batchedLines((chunk) => writes.push(chunk));
    out.line('{"n":1}');
    out.line('{"n":2}');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n']);
    out.line('{"n":3}');
    await nextTurn();
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n', '{"n":3}\n']);
  });

  it("writes at once when a batch reaches its size limit", () => {
    const writes: string[] = [];
    const out = batchedLines((chunk) => writes.push(chunk), 12);
    out.line("12345");
    expect(writes).toEqual([]);
    out.line("67890");
    expect(writes).toEqual(["12345\n67890\n"]);
  });

  it("never writes more than its limit at once, and only whole lines (workers share one stdout pipe)", async () => {
    const writes: string[] = [];
    const out = batchedLines((chunk) => writes.push(chunk), 10);
    out.line("12345");
    out.line("67890"); // would make 12 characters: the first line goes alone
    expect(writes).toEqual(["12345\n"]);
    out.line("a line longer than the limit");
    expect(writes).toEqual(["12345\n", "67890\n", "a line longer than the limit\n"]);
    await nextTurn();
    expect(writes.every((w) => w.endsWith("\n"))).toBe(true);
  });

  it("flush writes what is pending (for process exit) and nothing twice", async () => {
    const writes: string[] = [];
    const out = batchedLines((chunk) => writes.push(chunk));
    out.line("last words");
    out.flush();
    expect(writes).toEqual(["last words\n"]);
    await nextTurn();
    out.flush();
    expect(writes).toEqual(["last words\n"]);
  });
});
