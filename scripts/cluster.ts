// `npm run cluster`: many machines on one, all on 127.0.0.1: sqld (a primary and a read replica), a
// one-node Ceph RGW (S3), two service instances (writes to the primary, reads from the replica,
// blobs in one bucket) and nginx balancing between them. Prints the URLs; Ctrl-C (SIGINT) or SIGTERM
// stops every process and removes the folder. The parts are the tests' own helpers (test/helpers/).
// The Debian packages come from scripts/ensure-system-packages.mjs, imported first.
import "./ensure-system-packages.mjs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNginxBalancer } from "../test/helpers/nginx-balancer.js";
import { createRgwBucket, rgwSettings, startRgwCluster, stopRgwCluster } from "../test/helpers/rgw.js";
import { spawnServer } from "../test/helpers/spawn-server.js";
import { startSqld } from "../test/helpers/sqld.js";

const BUCKET = "cms";
const dir = await mkdtemp(join(tmpdir(), "cms-cluster-"));
const stops: (() => Promise<void>)[] = [];
let stopping = false;

/** Stops what has started, newest first (the balancer before the instances before their stores). */
async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => console.error(err));
    await rm(dir, { recursive: true, force: true });
  }
  process.exit(code);
}
// Handled before anything starts: a signal during start-up stops what is already up.
process.once("SIGINT", () => void stopAll(0));
process.once("SIGTERM", () => void stopAll(0));

try {
  // The database and the object store need nothing of each other: they start together. Both are
  // awaited to the end, so on a failure everything that did start is in `stops`.
  const [databases, store] = await Promise.allSettled([
    (async () => {
      const primary = await startSqld();
      stops.push(() => primary.close());
      const replica = await startSqld({ replicaOf: primary });
      stops.push(() => replica.close());
      return { primary, replica };
    })(),
    (async () => {
      const rgw = await startRgwCluster(join(dir, "rgw"));
      stops.push(() => stopRgwCluster(rgw.pids));
      await createRgwBucket(rgw, BUCKET);
      return rgw;
    })(),
  ]);
  if (databases.status === "rejected") throw databases.reason;
  if (store.status === "rejected") throw store.reason;
  const { primary, replica } = databases.value;
  const rgw = store.value;

  const env = {
    ...rgwSettings(rgw, BUCKET),
    CMS_DATABASE_URL: primary.url,
    CMS_DATABASE_READ_URL: replica.url,
    // Every instance must sign and check links with the same secret.
    CMS_LINK_SECRET: "cluster-link-secret-for-loopback-only!",
  };
  const instances = [];
  for (const id of ["a", "b"]) {
    // One at a time: the first migrates the database.
    const instance = await spawnServer({ ...env, CMS_INSTANCE_ID: id, CMS_VOLUME: join(dir, `unused-${id}`) });
    stops.push(async () => void (await instance.stop()));
    instances.push(instance);
  }
  const balancer = await startNginxBalancer(
    join(dir, "nginx"),
    instances.map((i) => i.url),
  );
  stops.push(() => balancer.close());

  console.log(`cluster up (folder ${dir}):
  load balancer  ${balancer.url}   (nginx; library: ${balancer.url}/library)
  instance a     ${instances[0]?.url}
  instance b     ${instances[1]?.url}
  sqld primary   ${primary.url}
  sqld replica   ${replica.url}
  Ceph RGW (S3)  ${rgw.endpoint}   bucket ${BUCKET}, key ${rgw.accessKeyId}
Ctrl-C stops all of it.`);
} catch (err) {
  console.error(`cluster: ${err instanceof Error ? err.message : String(err)}`);
  await stopAll(1);
}
