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

/** One test per value: refused with exactly one issue, which names the setting. */
const refusesNamingIt = (setting: string, values: string[]) =>
  it.each(values)(`refuses %s, naming ${setting}`, (value) => {
    const issues = issuesOf({ [setting]: value });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(new RegExp(`^${setting} `));
  });

describe("CMS_CONTENT_ORIGIN", () => {
  it("is optional, and kept as a bare origin", () => {
    expect(parseConfig({}).CMS_CONTENT_ORIGIN).toBeUndefined();
    expect(parseConfig({ CMS_CONTENT_ORIGIN: "https://Content.Example.org/" }).CMS_CONTENT_ORIGIN).toBe("https://content.example.org");
    expect(parseConfig({ CMS_CONTENT_ORIGIN: "http://127.0.0.1:9083" }).CMS_CONTENT_ORIGIN).toBe("http://127.0.0.1:9083");
  });

  refusesNamingIt("CMS_CONTENT_ORIGIN", ["content.example.org", "ftp://content.example.org", "https://content.example.org/cms", "https://u:p@content.example.org", "https://content.example.org?x=1"]);
});

describe("CMS_ROW_CACHE_ROWS", () => {
  it("defaults to 10 000 rows; 0 switches the cache off", () => {
    expect(parseConfig({}).CMS_ROW_CACHE_ROWS).toBe(10_000);
    expect(parseConfig({ CMS_ROW_CACHE_ROWS: "0" }).CMS_ROW_CACHE_ROWS).toBe(0);
  });

  refusesNamingIt("CMS_ROW_CACHE_ROWS", ["-1", "1.5", "many"]);
});

describe("CMS_WORKERS", () => {
  it("defaults to 1; takes a count or auto", () => {
    expect(parseConfig({}).CMS_WORKERS).toBe(1);
    expect(parseConfig({ CMS_WORKERS: "4" }).CMS_WORKERS).toBe(4);
    expect(parseConfig({ CMS_WORKERS: "auto" }).CMS_WORKERS).toBe("auto");
  });

  refusesNamingIt("CMS_WORKERS", ["0", "-2", "2.5", "all", "257"]);
});
