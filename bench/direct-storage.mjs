// One-off measurement of docs/direct-storage.md "Measured": a direct upload (createUploadURL, PUT to
// the bucket, completeUpload) against uploadResource of the same bytes, and a direct read, with the
// service process's CPU time from /proc/<pid>/stat (Linux). Not part of bench/run.ts yet.
//   node bench/direct-storage.mjs http://127.0.0.1:PORT <server pid> <bytes>
// The server: dist/node/server.mjs on CMS_STORAGE=s3 (e.g. node --import tsx scripts/rgw-cluster.mjs probe),
// CMS_MAX_RESOURCE_BYTES >= bytes, CMS_DIRECT_READ_MIN_BYTES=1048576.
import { createHash, randomBytes } from "node:crypto";
const base = process.argv[2]; const pid = Number(process.argv[3]); const size = Number(process.argv[4]);
const cpu = async () => { const t = (await import("node:fs")).readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" "); return (Number(t[11]) + Number(t[12])) * 10; }; // ms (USER_HZ 100)
const bytes = randomBytes(size);
const sha256 = createHash("sha256").update(bytes).digest("hex");
const post = (verb, body) => fetch(`${base}/cms/v1.0/${verb}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
let c0 = await cpu(); let t0 = performance.now();
const ticket = await (await post("createUploadURL", { resourceName: "big.bin", resourceTenantId: "bench", resourceAuthor: "b", size, sha256 })).json();
const put = await fetch(ticket.url, { method: "PUT", headers: ticket.headers, body: bytes }); await put.text();
let t1 = performance.now();
const done = await post("completeUpload", { uploadId: ticket.uploadId }); const res = await done.json();
let t2 = performance.now(); let c1 = await cpu();
console.log(`direct: ${size} B, PUT to RGW ${(t1 - t0).toFixed(0)} ms (status ${put.status}), completeUpload ${(t2 - t1).toFixed(0)} ms (status ${done.status}), service CPU ${c1 - c0} ms`);
// the same bytes through uploadResource (another tenant: no dedupe)
const form = new FormData(); form.set("resourceTenantId", "bench2"); form.set("resourceAuthor", "b"); form.set("resourceName", "big.bin"); form.set("file", new Blob([bytes]), "big.bin");
c0 = await cpu(); t0 = performance.now();
const up = await fetch(`${base}/cms/v1.0/uploadResource`, { method: "POST", body: form }); await up.text();
t1 = performance.now(); c1 = await cpu();
console.log(`uploadResource: ${(t1 - t0).toFixed(0)} ms (status ${up.status}), service CPU ${c1 - c0} ms`);
// direct read vs streamed read
const loc = done.headers.get("location");
c0 = await cpu(); t0 = performance.now();
const r = await fetch(`${base}${loc}`, { redirect: "manual" }); await r.body?.cancel();
c1 = await cpu(); t1 = performance.now();
console.log(`getData direct: ${r.status} in ${(t1 - t0).toFixed(0)} ms, service CPU ${c1 - c0} ms`);
const r2 = await fetch(r.headers.get("location")); const got = Buffer.from(await r2.arrayBuffer());
console.log(`  followed: ${r2.status}, ${got.length} B, sha ok ${createHash("sha256").update(got).digest("hex") === sha256}`);
