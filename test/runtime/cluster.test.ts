/**
 * `npm run cluster` as a user runs it: sqld primary and replica, a one-node Ceph RGW, two instances
 * and nginx in front, on 127.0.0.1. A file uploaded through the balancer is read back through it
 * (nginx takes turns between the instances); SIGINT to npm then leaves no process and no listener.
 */
import { randomBytes, createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { balancerConf } from "../helpers/nginx-balancer.js";
import { accepts, runNpmScript, stillRunning } from "../helpers/npm-script.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("npm run cluster", () => {
  it("writes the nginx configuration docs/scale-out.md shows", async () => {
    const doc = await readFile("docs/scale-out.md", "utf8");
    const shown = /^```nginx\n([\s\S]*?)^```$/m.exec(doc)?.[1];
    expect(shown?.trim()).toBe(balancerConf(8080, ["http://10.0.0.11:9082", "http://10.0.0.12:9082"]).trim());
  });

  it("serves through the load balancer and stops every part on SIGINT", async () => {
    let pids: number[] = [];
    const run = runNpmScript("cluster", {
      env: {},
      readyPattern: /load balancer\s+(http:\/\/\S+)/,
      timeoutMs: 240_000,
    });
    try {
      const balancer = await run.ready;
      await expect.poll(() => run.output().includes("Ctrl-C stops all of it."), { timeout: 5_000 }).toBe(true);
      const urls = [...run.output().matchAll(/(?:instance [ab]|sqld \w+|Ceph RGW \(S3\))\s+(http:\/\/\S+)/g)].map(
        (m) => new URL(m[1] as string),
      );
      expect(urls).toHaveLength(5);
      pids = await run.tree();

      const bytes = randomBytes(3 * 1024 * 1024);
      const form = new FormData();
      form.set("resourceTenantId", "cluster");
      form.set("resourceAuthor", "cluster-test");
      form.set("file", new Blob([bytes], { type: "application/octet-stream" }), "big.bin");
      const created = await fetch(new URL("/cms/v1.0/uploadResource", balancer), { method: "POST", body: form });
      expect(created.status, await created.clone().text()).toBe(201);
      const { resourceURI } = (await created.json()) as { resourceURI: string };
      // Round robin: consecutive reads go to both instances.
      for (let i = 0; i < 4; i++) {
        const res = await fetch(new URL(`/cms/v1.0/getData/${resourceURI}`, balancer));
        expect(res.status).toBe(200);
        expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(bytes));
      }

      run.npm.kill("SIGINT");
      await run.exited;
      await expect.poll(() => stillRunning(pids), { timeout: 30_000, interval: 200 }).toEqual([]);
      for (const url of [balancer, ...urls]) expect(await accepts(url), url.href).toBe(false);
    } finally {
      run.killGroup();
      // The Ceph daemons run in process groups of their own: a failed test still ends them.
      for (const pid of await stillRunning(pids)) process.kill(pid, "SIGKILL");
    }
  }, 300_000);
});
