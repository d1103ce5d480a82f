// Starts the tests' one-node Ceph RGW cluster (test/helpers/rgw.ts) on 127.0.0.1 by hand, prints
// its endpoint and keys, and keeps it up until Ctrl-C, which kills every daemon and removes its
// folder. The Debian packages come from scripts/ensure-system-packages.mjs, imported first: it
// installs what is missing when run as root, and otherwise prints the one apt line and exits.
//   node --import tsx scripts/rgw-cluster.mjs [bucket]
import "./ensure-system-packages.mjs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRgwBucket, startRgwCluster, stopRgwCluster } from "../test/helpers/rgw.ts";

const dir = await mkdtemp(join(tmpdir(), "cms-rgw-"));
const rgw = await startRgwCluster(dir);
const bucket = process.argv[2] ?? "cms";
await createRgwBucket(rgw, bucket);
console.log(`Ceph RGW up in ${rgw.startupMs} ms (logs: ${dir}/log)
  CMS_STORAGE=s3 CMS_S3_ENDPOINT=${rgw.endpoint} CMS_S3_BUCKET=${bucket}
  CMS_S3_ACCESS_KEY_ID=${rgw.accessKeyId} CMS_S3_SECRET_ACCESS_KEY=${rgw.secretAccessKey}
Ctrl-C stops it.`);
const stop = async () => {
  await stopRgwCluster(rgw.pids);
  await rm(dir, { recursive: true, force: true });
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
setInterval(() => {}, 1 << 30);
