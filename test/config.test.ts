/** Settings added with their validation: each bad value is refused with a message naming it. */
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../src/config.js";

const issuesOf = (env: Record<string, string>) => {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
};

describe("CMS_CONTENT_ORIGIN", () => {
  it("is optional, and kept as a bare origin", () => {
    expect(parseConfig({}).CMS_CONTENT_ORIGIN).toBeUndefined();
    expect(parseConfig({ CMS_CONTENT_ORIGIN: "https://Content.Example.org/" }).CMS_CONTENT_ORIGIN).toBe("https://content.example.org");
    expect(parseConfig({ CMS_CONTENT_ORIGIN: "http://127.0.0.1:9083" }).CMS_CONTENT_ORIGIN).toBe("http://127.0.0.1:9083");
  });

  it.each(["content.example.org", "ftp://content.example.org", "https://content.example.org/cms", "https://u:p@content.example.org", "https://content.example.org?x=1"])(
    "refuses %s, naming the setting",
    (value) => {
      const issues = issuesOf({ CMS_CONTENT_ORIGIN: value });
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatch(/^CMS_CONTENT_ORIGIN /);
    },
  );
});

describe("CMS_ROW_CACHE_ROWS", () => {
  it("defaults to 10 000 rows; 0 switches the cache off", () => {
    expect(parseConfig({}).CMS_ROW_CACHE_ROWS).toBe(10_000);
    expect(parseConfig({ CMS_ROW_CACHE_ROWS: "0" }).CMS_ROW_CACHE_ROWS).toBe(0);
  });

  it.each(["-1", "1.5", "many"])("refuses %s, naming the setting", (value) => {
    const issues = issuesOf({ CMS_ROW_CACHE_ROWS: value });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^CMS_ROW_CACHE_ROWS /);
  });
});

describe("CMS_WORKERS", () => {
  it("defaults to 1; takes a count or auto", () => {
    expect(parseConfig({}).CMS_WORKERS).toBe(1);
    expect(parseConfig({ CMS_WORKERS: "4" }).CMS_WORKERS).toBe(4);
    expect(parseConfig({ CMS_WORKERS: "auto" }).CMS_WORKERS).toBe("auto");
  });

  it.each(["0", "-2", "2.5", "all", "257"])("refuses %s, naming the setting", (value) => {
    const issues = issuesOf({ CMS_WORKERS: value });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^CMS_WORKERS /);
  });
});
