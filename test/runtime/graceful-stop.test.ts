/**
 * SIGTERM as `podman stop` / `docker stop` sends it (issue 42): the server stops accepting, answers
 * the request in flight, closes the database and exits 0 by itself, not by its 5 s deadline.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ResourceDto } from "../helpers/cms-client.js";
import { spawnServer } from "../helpers/spawn-server.js";
import { uploadInFlight } from "../helpers/upload-in-flight.js";

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
  // A keep-alive client (HTTP/1.1's default) whose upload the app is reading.
  const upload = await uploadInFlight(
    server.url,
    { resourceTenantId: "stop", resourceAuthor: "A", resourceName: "late.txt" },
    "sent after SIGTERM",
  );

  server.child.kill("SIGTERM");
  await server.waitForLine((line) => line.msg === "stopping");
  const answer = await upload.finish();
  expect(answer.status, answer.body).toBe(201);
  expect((JSON.parse(answer.body) as ResourceDto).size).toBe("sent after SIGTERM".length);
  // The server closes the connection once the answer is out, rather than keep it alive for a
  // request it would not take (until the 5 s deadline ended the process).
  expect(await upload.closed()).toBe(true);
  await server.waitForLine((line) => line.msg === "stopped");
  expect(await server.stop()).toBe(0);
});
