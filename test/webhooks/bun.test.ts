/**
 * The delivery path on Bun: `bun src/bun.ts` (the pinned devDependency) on a real libSQL file and
 * volume delivers a create's event to a receiver on 127.0.0.1 through its own timer and fetcher,
 * signed so that the `standardwebhooks` package verifies it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { API } from "../helpers/cms-client.js";
import { processClient } from "../helpers/process-client.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { type Receiver, startReceiver } from "./receiver.js";

let dir: string;
let server: ServerProcess | undefined;
let receiver: Receiver | undefined;
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("delivers a create's event on Bun, signed as standardwebhooks verifies", async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-webhook-bun-"));
  receiver = await startReceiver();
  server = await spawnServer(
    {
      CMS_VOLUME: join(dir, "volume"),
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      CMS_FETCH_ALLOW_PRIVATE: "true", // the receiver is on 127.0.0.1
      CMS_WEBHOOK_POLL_MS: "50",
    },
    "bun",
  );
  const subscribed = await fetch(`${server.url}${API}/webhooks`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url }),
  });
  expect(subscribed.status).toBe(201);
  const { secret } = (await subscribed.json()) as { secret: string };

  const created = await processClient(server, "acme").create();
  await receiver.waitFor(1);
  const [event] = receiver.verified(secret);
  expect(event?.id).toMatch(/^msg_[0-9a-f]{32}$/);
  expect(event?.event).toMatchObject({
    type: "resource.created",
    data: { resourceUID: created.resourceUID, resourceTenantId: "acme", revision: 1 },
  });
  expect(receiver.received[0]?.headers["content-type"]).toBe("application/json");
  expect(() => receiver?.verified(`whsec_${btoa("not the secret")}`)).toThrow();
});
