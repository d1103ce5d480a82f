/** The JSON logger: one parseable object per line, errors serialised, levels filtered. */
import { describe, expect, it } from "vitest";
import { createJsonLogger } from "../../src/lib/logger.js";

const capture = (level: "debug" | "info" | "warn" = "info") => {
  const lines: string[] = [];
  const logger = createJsonLogger((line) => lines.push(line), level, () => new Date("2026-11-23T03:00:00.000Z"));
  return { logger, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>), lines };
};

describe("createJsonLogger", () => {
  it("writes one JSON object per line with time, level, message and the fields", () => {
    const { logger, records, lines } = capture();
    logger.info("request", { method: "GET", status: 200, length: undefined });
    expect(lines[0]).not.toContain("\n");
    expect(records()).toEqual([{ time: "2026-11-23T03:00:00.000Z", level: "info", msg: "request", method: "GET", status: 200 }]);
  });

  it("serialises errors (also nested ones) with name, message, code, stack and cause", () => {
    const { logger, records } = capture();
    const cause = Object.assign(new Error("disk gone"), { code: "EIO" });
    logger.error("unhandled error", { err: new TypeError("bad", { cause }), context: { inner: new RangeError("deep") } });
    const [record] = records();
    expect(record?.err).toMatchObject({ name: "TypeError", message: "bad", stack: expect.stringContaining("TypeError: bad"), cause: { name: "Error", message: "disk gone", code: "EIO" } });
    expect(record?.context).toMatchObject({ inner: { name: "RangeError", message: "deep" } });
  });

  it("drops records below its level", () => {
    const { logger, records } = capture("warn");
    logger.info("chatty");
    logger.warn("kept");
    expect(records().map((r) => r.msg)).toEqual(["kept"]);
  });
});
