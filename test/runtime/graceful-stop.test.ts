/**
 * SIGTERM as `podman stop` / `docker stop` sends it (issue 42): the server stops accepting, answers
 * the request in flight, closes the database and exits 0 by itself, not by its 5 s deadline.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { API, form, type ResourceDto } from "../helpers/cms-client.js";
import { openRaw } from "../helpers/raw-http.js";
import { spawnServer } from "../helpers/spawn-server.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-graceful-stop-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("finishes an upload in flight on SIGTERM, then closes its connection and the database, and exits 0", async () => {
  const server = await spawnServer({
    CMS_VOLUME: join(dir, "volume"),
    CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
  });
  const body = new Response(
    form(
      { resourceTenantId: "stop", resourceAuthor: "A", resourceName: "late.txt" },
      { bytes: new TextEncoder().encode("sent after SIGTERM"), type: "text/plain" },
    ),
  );
  const bytes = new Uint8Array(await body.arrayBuffer());
  // A keep-alive client (HTTP/1.1's default) whose upload the app is reading: 100 Continue says so.
  const conn = await openRaw(Number(new URL(server.url).port));
  conn.write(
    `POST ${API}/uploadResource HTTP/1.1\r\nHost: cms\r\nContent-Type: ${body.headers.get("content-type")}\r\n` +
      `Content-Length: ${bytes.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  expect((await conn.response()).status).toBe(100);

  server.child.kill("SIGTERM");
  await server.waitForLine((line) => line.msg === "stopping");
  conn.write(bytes);
  const answer = await conn.response();
  expect(answer.status, answer.body).toBe(201);
  expect((JSON.parse(answer.body) as ResourceDto).size).toBe("sent after SIGTERM".length);
  // The server closes the connection once the answer is out, rather than keep it alive for a
  // request it would not take (until the 5 s deadline ended the process).
  expect(await conn.closed()).toBe(true);
  await server.waitForLine((line) => line.msg === "stopped");
  expect(await server.stop()).toBe(0);
});
