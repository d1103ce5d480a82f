/**
 * V8 settings for the Node server, applied before any other module of the entry runs (src/node.ts
 * imports this first).
 *
 * Allocation-site pretenuring off: V8 watches where objects are allocated and, when most objects of a
 * site survived a scavenge, allocates that site's later objects straight in the old generation, for
 * the life of the process. Start-up (migrations, the library page, sharp, bundle parsing) keeps some
 * of Node's own per-request objects alive across scavenges — its tick objects among them, ten
 * `process.nextTick` per 4 KiB GET — and whether a site tips over differs from process to process.
 * A process where it did paid 0.5–0.9 µs per nextTick against 0.05–0.1 µs (2 of 3 processes of this
 * build, 0 of 3 of b72fcdc's; none of 7 with this flag), ≈ 5–9 µs of a 110 µs GET, and filled the old
 * generation with garbage only a full GC frees (issue 36; bench/NOTES.md, fifth pass). The service's
 * long-lived state (caches, prepared statements) is small, so copying it once more costs nothing
 * measurable. Set at run time through node:v8 (read by the GC at each scavenge), as the bundle is
 * started by a plain `node dist/node/server.mjs`.
 */
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--no-allocation-site-pretenuring");
