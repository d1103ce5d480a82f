/**
 * Spooled image sources left by a killed process are removed by the next one (issue 30: a source
 * too large for the buffers is written to a temp file for libvips). Each process spools into its
 * own folder under `<os temp>/cms-image-spool/`, claimed as the fs driver claims its temp folders;
 * a killed one leaves it behind with whatever it was spooling, and the next server to start removes
 * every folder whose owner is dead. Real server processes (TMPDIR points at a test folder), SIGKILL.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnServer } from "../helpers/spawn-server.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-spool-sweep-"));
  await mkdir(join(dir, "tmp"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const spoolRoot = () => join(dir, "tmp", "cms-image-spool");
const folders = () => readdir(spoolRoot()).catch(() => [] as string[]);

describe("the image spool folder", () => {
  it("is one per process; a killed one's (with what it was spooling) goes when the next starts", async () => {
    const env = {
      TMPDIR: join(dir, "tmp"),
      CMS_VOLUME: join(dir, "volume"),
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
    };
    const killed = await spawnServer(env);
    const [claimed] = await folders();
    expect(claimed).toMatch(new RegExp(`^${killed.child.pid}-`));
    // A source it was spooling when it died.
    await writeFile(join(spoolRoot(), claimed!, "cms-image-in-flight"), Buffer.alloc(1024 * 1024));
    killed.child.kill("SIGKILL");
    await new Promise((resolve) => killed.child.once("exit", resolve));

    const next = await spawnServer(env);
    const now = await folders();
    expect(now).toHaveLength(1);
    expect(now[0]).toMatch(new RegExp(`^${next.child.pid}-`));
    // Stopped gracefully, it leaves nothing behind.
    await next.stop();
    expect(await folders()).toEqual([]);
  }, 60_000);
});
