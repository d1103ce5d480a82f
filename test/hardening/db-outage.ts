/** What db-outage.test.ts and db-outage.workerd.test.ts share: a client, the outage answer, recovery. */
import { expect } from "vitest";
import { API, base64, expectProblem } from "../helpers/cms-client.js";
import type { ServerProcess } from "../helpers/spawn-server.js";
import { scaled } from "./scale.js";

/** Requests of each kind sent while the database is down. */
export const ROUNDS = scaled(4, 50);
export const RECOVERY_LIMIT_MS = 15_000;
export const TENANT = "outage";

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The service's log lines (JSON) with this message. */
export const logged = (server: ServerProcess, msg: string) =>
  server.stdout.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.msg === msg);

export function client(baseUrl: string) {
  const post = (verb: string, body: unknown) =>
    fetch(`${baseUrl}${API}/${verb}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  return {
    create: (name: string, content: string) =>
      post("createResource", {
        resourceAuthor: "Author",
        resourceMediaType: "text/plain",
        resourceName: name,
        resourceTenantId: TENANT,
        resourceBinary: base64(content),
      }),
    getData: (resourceURI: string) => fetch(`${baseUrl}${API}/getData/${resourceURI}`),
    /** A tus creation (no body): the upload's row is the first thing it writes. */
    createUpload: (name: string) =>
      fetch(`${baseUrl}${API}/uploads`, {
        method: "POST",
        headers: {
          "tus-resumable": "1.0.0",
          "upload-length": "5",
          "upload-metadata": Object.entries({ resourceTenantId: TENANT, filename: name, author: "Author" })
            .map(([k, v]) => `${k} ${Buffer.from(v).toString("base64")}`)
            .join(","),
        },
      }),
    query: (uid: string) => post("queryResource", { queryUID: uid }),
  };
}

/** Asserts the outage answer: 503 problem+json DATABASE_UNAVAILABLE with a Retry-After in seconds. */
export async function expectUnavailable(res: Response) {
  const retryAfter = res.headers.get("retry-after");
  const problem = await expectProblem(res, 503, "DATABASE_UNAVAILABLE");
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(problem.detail).toMatch(/database/i);
  expect(problem.detail).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|SQLITE/); // no internals
}

/** Sends `attempt` until it answers `status`; the milliseconds that took. */
export async function untilStatus(attempt: () => Promise<Response>, status: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const res = await attempt();
    await res.arrayBuffer();
    if (res.status === status) return performance.now() - started;
    if (performance.now() - started > RECOVERY_LIMIT_MS)
      throw new Error(`still ${res.status} after ${RECOVERY_LIMIT_MS} ms`);
    await sleep(50);
  }
}

/** The resource written before the outage (201), which getData must serve again after it. */
export async function writtenBefore(cms: ReturnType<typeof client>) {
  const before = await cms.create("before.txt", "written before the outage");
  expect(before.status, await before.clone().text()).toBe(201);
  return (await before.json()) as { resourceURI: string; resourceUID: string };
}
