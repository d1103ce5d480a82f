/**
 * Issue 41 item 1, measured: the server's peak RSS growth (VmHWM) for a ?width=32 of an AVIF whose
 * ispe claims 64×48 but holds a 6000×6000 frame (CMS_IMAGE_MAX_PIXELS=4000000), and the time of a
 * repeat. Run: `npm run build && npx tsx bench/measure-lying-avif.ts [6000]` (the frame side; not a test).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnServer } from "../test/helpers/spawn-server.js";
import { lyingAvif } from "../test/images/bomb.js";
import { libvipsLoaded } from "../test/images/libvips-loaded.js";

const size = Number(process.argv[2] ?? 6000);
const avif = await lyingAvif(size);
const dir = await mkdtemp(join(tmpdir(), "cms-lying-measure-"));
const server = await spawnServer({
  CMS_VOLUME: join(dir, "volume"),
  CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
  CMS_IMAGE_MAX_PIXELS: "4000000",
});
try {
  const form = new FormData();
  for (const [k, v] of Object.entries({
    resourceAuthor: "a",
    resourceMediaType: "image/avif",
    resourceName: "lie.avif",
    resourceTenantId: "t",
  }))
    form.set(k, v);
  form.set("file", new Blob([new Uint8Array(avif)], { type: "image/avif" }), "lie.avif");
  const created = await fetch(`${server.url}/cms/v1.0/uploadResource`, { method: "POST", body: form });
  const { resourceURI } = (await created.json()) as { resourceURI: string };
  // Warm: libvips loaded (the server loads it a moment after listening), one plain read; then the idle peak.
  while (!(await libvipsLoaded(server.child.pid))) await new Promise((r) => setTimeout(r, 50));
  await (await fetch(`${server.url}/cms/v1.0/getData/${resourceURI}`)).arrayBuffer();
  const idle = await server.peakRss();
  const ask = async (query = "?width=32") => {
    const started = performance.now();
    const res = await fetch(`${server.url}/cms/v1.0/getData/${resourceURI}${query}`);
    const body = await res.text();
    return {
      status: res.status,
      ms: +(performance.now() - started).toFixed(2),
      code: /"code":"(\w+)"/.exec(body)?.[1],
    };
  };
  const first = await ask();
  const peak = await server.peakRss();
  const repeats = [];
  for (let i = 0; i < 50; i++) repeats.push(await ask());
  const ms = repeats.map((r) => r.ms).sort((a, b) => a - b);
  const plain = [];
  for (let i = 0; i < 20; i++) plain.push((await ask("")).ms);
  plain.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      avifBytes: avif.length,
      frame: `${size}x${size}`,
      first,
      peakRssGrowthMiB: +((peak - idle) / 2 ** 20).toFixed(1),
      repeatStatus: [...new Set(repeats.map((r) => `${r.status} ${r.code}`))],
      repeatMs: { min: ms[0], p50: ms[25], p90: ms[45], max: ms.at(-1) },
      plainGetDataMs: { min: plain[0], p50: plain[10], max: plain.at(-1) },
    }),
  );
} finally {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
