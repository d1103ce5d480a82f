/**
 * A temp directory of migrated libSQL files for tests on a real database: `open` opens (and
 * migrates) one file in it, `store` gives that file's MetadataStore, `close` closes every
 * connection it opened and removes the directory.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMetadataStore, type MetadataStore } from "../../src/metadata/metadata-store.js";
import { openDatabase } from "../../src/runtime/host/database.js";
import { reservingStore } from "./reserving-store.js";

type Opened = Awaited<ReturnType<typeof openDatabase>>;

export interface TempStore {
  dir: string;
  /** The path of a database file in the directory (`cms.db` unless named). */
  file(name?: string): string;
  /** A migrated connection to that file; its close may be called early, `close` skips it then. */
  open(name?: string): Promise<Opened>;
  /** A reserving MetadataStore on a new connection to that file (see reserving-store.ts). */
  store(name?: string): Promise<MetadataStore>;
  close(): Promise<void>;
}

export async function tempStore(prefix: string): Promise<TempStore> {
  const dir = await mkdtemp(join(tmpdir(), `cms-${prefix}-`));
  const closers: (() => void)[] = [];
  const file = (name = "cms.db") => join(dir, name);
  const open = async (name?: string): Promise<Opened> => {
    const opened = await openDatabase({ CMS_DATABASE_URL: `file:${file(name)}` });
    let open = true;
    const close = () => {
      if (open) opened.close();
      open = false;
    };
    closers.push(close);
    return { ...opened, close };
  };
  return {
    dir,
    file,
    open,
    store: async (name) => reservingStore(createMetadataStore((await open(name)).db)),
    async close() {
      for (const close of closers) close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
