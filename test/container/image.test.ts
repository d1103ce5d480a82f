/**
 * The container image (issue 42), as a user builds and runs it: the repository's Containerfile built
 * with podman, then run with a volume for /data. No container registry is reachable here, so the base
 * image its FROM names is made first from Debian's mirror and the npm registry's Node 22
 * (scripts/container-base.mjs, cached between runs); the build stage's `npm ci` reaches the npm
 * registry through the host's network, with the host's npm cache and CA bundle mounted in.
 *
 * In the heavy lane (vitest.config.ts): building takes a core for minutes, which must not sit beside
 * the files that time things.
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_IMAGE } from "../../scripts/container-base.mjs";
import { API, cmsClient, form, type ResourceDto } from "../helpers/cms-client.js";
import { podman, type RunningContainer, runContainer } from "../helpers/container.js";
import { uploadInFlight } from "../helpers/upload-in-flight.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const IMAGE = "localhost/content-resource-service:test";
const id = randomBytes(4).toString("hex");
const VOLUME = `cms-test-data-${id}`;
const TENANT = "container";
const MB = 1000 * 1000;

/** What the run measured, printed once at the end (issue 42 asks for the figures). */
const figures: Record<string, string> = {};

let npmrcDir: string;

/** The build's npm talks to the registry as the host's does: its CA file, its cache, offline first. */
function npmBuildMounts(): string[] {
  npmrcDir = mkdtempSync(join(tmpdir(), "cms-container-npmrc-"));
  const npmConfig = (key: string) =>
    execFileSync("npm", ["config", "get", key], { encoding: "utf8", cwd: ROOT }).trim();
  const cafile = npmConfig("cafile");
  const lines = ["prefer-offline=true", `registry=${npmConfig("registry")}`];
  const mounts = ["-v", `${npmConfig("cache")}:/root/.npm`];
  if (cafile !== "null" && cafile !== "undefined" && existsSync(cafile)) {
    lines.push("cafile=/run/host-ca.crt");
    mounts.push("-v", `${cafile}:/run/host-ca.crt:ro`);
  }
  writeFileSync(join(npmrcDir, "npmrc"), `${lines.join("\n")}\n`);
  return [...mounts, "-v", `${join(npmrcDir, "npmrc")}:/root/.npmrc:ro`];
}

beforeAll(async () => {
  const base = performance.now();
  // A child process: making the base takes minutes, which would block this worker's event loop.
  const made = await promisify(execFile)(process.execPath, ["scripts/container-base.mjs"], {
    cwd: ROOT,
    timeout: 15 * 60_000,
  });
  figures.base = made.stdout.trim();
  figures.baseMs = String(Math.round(performance.now() - base));
  const build = performance.now();
  await podman(
    // docker format: OCI images have no HEALTHCHECK. --pull=never: the base is the one made above.
    ["build", "--format", "docker", "--pull=never", "--network", "host", ...npmBuildMounts(), "-t", IMAGE, ROOT],
    20 * 60_000,
  );
  figures.buildMs = String(Math.round(performance.now() - build));
  await podman(["volume", "create", VOLUME]);
}, 40 * 60_000);

afterAll(async () => {
  await podman(["rm", "--force", "--ignore", ...["first", "second"].map((n) => `cms-test-${n}-${id}`)]);
  await podman(["volume", "rm", "--force", VOLUME]).catch(() => undefined);
  if (npmrcDir) rmSync(npmrcDir, { recursive: true, force: true });
  // Each build leaves the previous image and its stages' layers untagged; a week's are kept as the
  // build cache (an unchanged lockfile skips `npm ci`), older ones removed so disk use stays bounded.
  await podman(["image", "prune", "--force", "--filter", "until=168h"]);
  console.info(`container image: ${JSON.stringify(figures)}`);
});

/** A container of the image on the test's volume; the time from `podman run` to /readyz 200. */
async function start(name: string): Promise<RunningContainer & { name: string; readyMs: number }> {
  const started = performance.now();
  const container = await runContainer(`cms-test-${name}-${id}`, IMAGE, ["-e", "CMS_PORT=0", "-v", `${VOLUME}:/data`]);
  expect((await fetch(`${container.url}/readyz`)).status).toBe(200);
  return { ...container, name: `cms-test-${name}-${id}`, readyMs: Math.round(performance.now() - started) };
}

const client = (container: RunningContainer) => cmsClient({ url: (path) => container.url + path }, TENANT);

describe("the Containerfile", () => {
  it("builds FROM the pinned official Node 22 slim image, the one scripts/container-base.mjs makes here", () => {
    const froms = readFileSync(join(ROOT, "Containerfile"), "utf8").match(/^FROM \S+/gm);
    expect(froms).toEqual([`FROM ${BASE_IMAGE}`, `FROM ${BASE_IMAGE}`]);
  });

  it("configures a non-root user, the /data volume, SIGTERM and a /readyz health check", async () => {
    const [config] = JSON.parse(await podman(["image", "inspect", IMAGE])) as {
      Size: number;
      Config: { User: string; Volumes: Record<string, unknown>; StopSignal: string; Env: string[] };
      Healthcheck?: { Test: string[] };
    }[];
    expect(config!.Config.User).toBe("node");
    expect(Object.keys(config!.Config.Volumes)).toEqual(["/data"]);
    expect(config!.Config.StopSignal).toBe("SIGTERM");
    expect(config!.Config.Env).toEqual(
      expect.arrayContaining(["CMS_HOST=0.0.0.0", "CMS_VOLUME=/data/volume", "CMS_DATABASE_URL=file:/data/cms.db"]),
    );
    expect(config!.Healthcheck?.Test.join(" ")).toContain("/readyz");
    // Production dependencies only: all of them (the devDependencies too) would be ~720 MB.
    const [base] = JSON.parse(await podman(["image", "inspect", BASE_IMAGE])) as { Size: number }[];
    const own = config!.Size - base!.Size;
    figures.imageMB = (config!.Size / MB).toFixed(0);
    figures.overBaseMB = (own / MB).toFixed(0);
    expect(own).toBeLessThan(200 * MB);
  });
});

describe("a container of the image, on a volume", () => {
  let first: Awaited<ReturnType<typeof start>>;
  let stored: { text: ResourceDto; png: ResourceDto; inFlight?: string };

  beforeAll(async () => {
    first = await start("first");
    figures.firstReadyMs = String(first.readyMs);
  }, 60_000);

  it("runs the server as uid 1000, not root", async () => {
    const status = await podman(["exec", first.name, "cat", "/proc/1/status"]);
    expect(status).toMatch(/^Name:\s+node$/m);
    expect(status).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
  });

  it("passes its health check, which fails when nothing answers", async () => {
    const [config] = JSON.parse(await podman(["image", "inspect", IMAGE])) as { Healthcheck: { Test: string[] } }[];
    const [kind, ...command] = config!.Healthcheck.Test;
    expect(kind).toBe("CMD");
    // The check reads CMS_PORT (9082 in the image); this container listens on the port it was given.
    const port = new URL(first.url).port;
    await expect(podman(["exec", "-e", `CMS_PORT=${port}`, first.name, ...command])).resolves.toBe("");
    await expect(podman(["exec", "-e", "CMS_PORT=1", first.name, ...command])).rejects.toThrow();
  });

  it("stores an upload under /data and serves it, an image derivative too (sharp's libvips in the image)", async () => {
    const cms = client(first);
    const res = await fetch(`${first.url}${API}/uploadResource`, {
      method: "POST",
      body: form(
        { resourceTenantId: TENANT, resourceAuthor: "A", resourceName: "hello.txt" },
        { bytes: new TextEncoder().encode("hello from a container"), type: "text/plain" },
      ),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const text = (await res.json()) as ResourceDto;
    expect(new TextDecoder().decode(await cms.data(text.resourceURI))).toBe("hello from a container");

    const pngBytes = await sharp({ create: { width: 80, height: 40, channels: 3, background: "#48c" } })
      .png()
      .toBuffer();
    const png = await cms.create({ resourceName: "wide.png", resourceMediaType: "image/png" }, pngBytes);
    const webp = await fetch(`${first.url}${API}/getData/${png.resourceURI}?width=20&format=webp`);
    expect(webp.status).toBe(200);
    const meta = await sharp(Buffer.from(await webp.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["webp", 20, 10]);
    stored = { text, png };

    const data = await podman(["exec", first.name, "ls", "/data"]);
    expect(data.split("\n")).toEqual(expect.arrayContaining(["cms.db", "volume"]));
  });

  it("on SIGTERM finishes the upload in flight, then exits 0 within 10 s", async () => {
    const upload = await uploadInFlight(
      first.url,
      { resourceTenantId: TENANT, resourceAuthor: "A", resourceName: "in-flight.txt" },
      "sent after SIGTERM",
    );
    const stopping = performance.now();
    const stop = podman(["stop", "--time", "10", first.name]); // SIGTERM, then SIGKILL after 10 s
    await first.waitForLine((line) => line.msg === "stopping" && line.signal === "SIGTERM");
    const answer = await upload.finish();
    expect(answer.status, answer.body).toBe(201);
    stored.inFlight = (JSON.parse(answer.body) as ResourceDto).resourceURI;
    await first.waitForLine((line) => line.msg === "stopped"); // by itself, not by its 5 s deadline
    await stop;
    expect(await first.exited).toBe(0); // its own exit, not SIGKILL's 137
    const stopMs = performance.now() - stopping;
    figures.stopMs = String(Math.round(stopMs));
    expect(stopMs).toBeLessThan(10_000);
  });

  it("a new container on the same volume serves what the stopped one stored", async () => {
    const second = await start("second");
    figures.secondReadyMs = String(second.readyMs);
    try {
      const cms = client(second);
      expect(new TextDecoder().decode(await cms.data(stored.text.resourceURI))).toBe("hello from a container");
      expect(new TextDecoder().decode(await cms.data(stored.inFlight!))).toBe("sent after SIGTERM");
      const png = await cms.data(stored.png.resourceURI);
      expect((await sharp(png).metadata()).width).toBe(80);
    } finally {
      await podman(["stop", "--time", "10", second.name]);
    }
    expect(await second.exited).toBe(0);
  });
});
