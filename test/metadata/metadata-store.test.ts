// The metadata store suite on libSQL files (the single-machine deployment): a fresh file per database.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeMetadataStore } from "./metadata-store.suite.js";

let dirs: string[] = [];
describeMetadataStore({
  name: "a libSQL file",
  fresh: async () => {
    const dir = await mkdtemp(join(tmpdir(), "cms-store-"));
    dirs.push(dir);
    return `file:${join(dir, "cms.db")}`;
  },
  cleanup: async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    dirs = [];
  },
});
