/**
 * Keeps one of Node's tick objects (the queue entries `process.nextTick` makes, ten per 4 KiB GET)
 * alive for the life of the process, so the hidden classes they are built through are never
 * collected. Imported by the Node entry right after v8-flags.ts.
 *
 * nextTick builds each entry as `{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback,
 * args }`. V8 remembers, per property of that literal, the one hidden class it was added to
 * (monomorphic feedback, weakly held) and compiles the additions inline. A full GC while no tick
 * object is alive (a process idle after start-up: the image warm-up's GC, the memory reducer's)
 * collects those classes; the next tick makes new ones, which V8 counts as a second class seen:
 * every property but the first turns megamorphic for good (Node 20 and 22 alike), and every tick
 * object is then built in the runtime, with a class migration per object. A process of the shipped
 * bundle left idle for 4 s after start paid ≈ 1.5 µs more user CPU per 4 KiB GET (13.1–13.4 µs
 * against 11.6–11.9 loaded at once) for the rest of its life (bench/NOTES.md, "eleventh pass").
 * An object kept holds its class, and its class the classes before it.
 */
import { createHook } from "node:async_hooks";

let kept: object | undefined;
// On only for one nextTick: an async hook left on would run for every async resource.
const hook = createHook({
  init(_asyncId, type, _triggerAsyncId, resource) {
    if (type === "TickObject") kept ??= resource;
  },
}).enable();
process.nextTick(() => {});
hook.disable();

/** The tick object kept (undefined if this Node made none through the hook). */
export const keptTickObject: object | undefined = kept;
