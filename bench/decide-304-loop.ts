/**
 * The delivery core's 304 decision in a loop, two checkouts' src side by side in one process,
 * interleaved rounds: what a change to decide/answerBlob/content-entity costs per request, without
 * the noise of two server processes on a shared machine (issue 36, bench/NOTES.md "fourth pass").
 *
 *   node --import tsx bench/decide-304-loop.ts <old checkout> <new checkout> [--rounds=16]
 *   bun bench/decide-304-loop.ts <old checkout> <new checkout>
 *
 * A checkout is a directory with src/ (e.g. `git worktree add /tmp/old HEAD~1`; it resolves its
 * imports from its own node_modules: a symlink to this checkout's will do). The row is a real one:
 * every column of today's schema, built and frozen by `toResourceRow` as the prepared lookup does.
 */
import path from "node:path";
import { getTableColumns } from "drizzle-orm";
import type { DeliveryCore } from "../src/delivery/core.js";
import { resources } from "../src/metadata/schema.js";
import { toResourceRow } from "../src/metadata/uri-lookup.js";

const args = process.argv.slice(2);
const roots = args.filter((a) => !a.startsWith("--")).map((a) => path.resolve(a));
if (roots.length !== 2) throw new Error("usage: decide-304-loop.ts <old checkout> <new checkout> [--rounds=16]");
const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.split("=")[1] ?? 16);
const PER_ROUND = 200_000;

const cores: DeliveryCore[] = [];
for (const root of roots) {
  const { deliveryCore } = (await import(
    path.join(root, "src/delivery/core.ts")
  )) as typeof import("../src/delivery/core.js");
  const content = {
    read: async () => new Uint8Array(0),
    contentOrigin: undefined,
    cache: { publicRead: true, maxAge: 60, staleWhileRevalidate: 0 },
  };
  cores.push(deliveryCore({ content } as unknown as Parameters<typeof deliveryCore>[0]));
}

const sha = "8c6c8218866784b8a14b72ecd365ff2328b439a42c4611f21276a1782f538fd5";
const sample: Record<string, unknown> = {
  uid: "01m8k6zhs87bma4gnd3yyh3h8ftxte-bench",
  shortId: "01m8k6zhs87bma4gnd3yyh3h8ftxte",
  tenantId: "bench",
  context: "01m8k6zhs87bma4gnd3yyh3h8ftxte-bench",
  path: "small.bin",
  name: "small.bin",
  author: "bench",
  mediaType: "application/octet-stream",
  size: 4096,
  sha256: sha,
  blobKey: `t/bench/${sha}`,
  createdAt: 1795941186051,
  updatedAt: 1795941186051,
  tags: "[]",
  tagKeys: "[]",
  folder: "/",
  metadata: "{}",
  metadataVersion: 1,
};
const columns = Object.keys(getTableColumns(resources));
const row = toResourceRow(columns.map((key) => sample[key] ?? null));
const etag = `"${sha}"`;
const header = (name: string) => (name === "if-none-match" ? etag : undefined);

const micros: [number[], number[]] = [[], []];
for (let round = 0; round < rounds; round++) {
  for (const i of round % 2 ? [1, 0] : [0, 1]) {
    const core = cores[i] as DeliveryCore;
    const started = performance.now();
    for (let k = 0; k < PER_ROUND; k++) {
      const answer = core.now(row, { version: undefined, image: undefined }, "GET", header, "127.0.0.1:1");
      if (!answer || answer instanceof Promise || answer.status !== 304) throw new Error("not a 304");
    }
    micros[i as 0 | 1].push(((performance.now() - started) / PER_ROUND) * 1000);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
const ratios = micros[0].map((old, i) => old / (micros[1][i] as number));
process.stdout.write(
  `${columns.length} columns; µs per 304 decision, median of ${rounds} rounds: old ${median(micros[0]).toFixed(2)}, new ${median(micros[1]).toFixed(2)}; old ÷ new median ${median(ratios).toFixed(2)} (per round: ${ratios.map((r) => r.toFixed(2)).join(" ")})\n`,
);
