/**
 * libsql:// URLs go over WebSockets (runtime/host/database.ts): @libsql/client 0.18 on Node would
 * send them over HTTP, one request per statement. A real sqld answers the mapped URL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, remoteClientUrl } from "../../src/runtime/host/database.js";
import { type Sqld, startSqld } from "../helpers/sqld.js";

describe("remoteClientUrl", () => {
  it("maps libsql:// to wss://, and to ws:// with ?tls=0, keeping host, port, path and other parameters", () => {
    expect(remoteClientUrl("libsql://db-acme.turso.io")).toBe("wss://db-acme.turso.io");
    expect(remoteClientUrl("libsql://127.0.0.1:8080?tls=0")).toBe("ws://127.0.0.1:8080");
    expect(remoteClientUrl("libsql://h:1/x?tls=1&a=b")).toBe("wss://h:1/x?a=b");
  });

  it("leaves every other URL as it is", () => {
    for (const url of ["http://127.0.0.1:8080", "https://h", "ws://h:1", "wss://h", "file:./cms.db", ":memory:"])
      expect(remoteClientUrl(url)).toBe(url);
  });
});

describe("a libsql:// URL with ?tls=0 on a real sqld", () => {
  let sqld: Sqld;
  beforeAll(async () => {
    sqld = await startSqld();
  });
  afterAll(() => sqld?.close());

  it("opens, migrates and queries it", async () => {
    const { db, close } = await openDatabase({
      CMS_DATABASE_URL: `${sqld.url.replace("http:", "libsql:")}?tls=0`,
      CMS_DATABASE_AUTH_TOKEN: undefined,
    });
    try {
      const { rows } = await db.$client.execute("SELECT count(*) AS n FROM resources");
      expect(Number(rows[0]?.n)).toBe(0);
      expect(db.$client.protocol).toBe("ws");
    } finally {
      close();
    }
  });
});
