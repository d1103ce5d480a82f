/**
 * The Node/Bun background pass schedule (webhook deliveries, blob collection): a tick while a pass
 * runs is skipped, not queued, and `stop` resolves only after the running pass. Timers are vitest's.
 */
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { schedulePasses } from "../../src/runtime/host/pass-schedule.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
});
afterEach(() => {
  vi.useRealTimers();
});

it("never overlaps passes, and stop waits for the running one", async () => {
  let started = 0;
  let finish = () => {};
  const pass = () => {
    started++;
    return new Promise<void>((resolve) => {
      finish = resolve;
    });
  };
  const schedule = schedulePasses(pass, 100, () => {});
  await vi.advanceTimersByTimeAsync(350); // three ticks, one pass still running
  expect(started).toBe(1);
  let stopped = false;
  const stopping = schedule.stop().then(() => {
    stopped = true;
  });
  await vi.advanceTimersByTimeAsync(0);
  expect(stopped).toBe(false);
  finish();
  await stopping;
  expect(stopped).toBe(true);
  await vi.advanceTimersByTimeAsync(1000);
  expect(started).toBe(1); // no pass after stop
});

it("runs at once when asked to, and hands a failed pass to onError", async () => {
  const errors: unknown[] = [];
  const schedule = schedulePasses(
    () => Promise.reject(new Error("boom")),
    1000,
    (err) => errors.push(err),
    {
      atStart: true,
    },
  );
  await vi.advanceTimersByTimeAsync(0);
  expect(errors.map((e) => (e as Error).message)).toEqual(["boom"]);
  await schedule.stop();
});

it("is idle once the start-up pass has run and no pass is running", async () => {
  let finish = () => {};
  const schedule = schedulePasses(
    () =>
      new Promise<void>((resolve) => {
        finish = resolve;
      }),
    1000,
    () => {},
    { atStart: true },
  );
  let idle = false;
  const quiet = schedule.idle().then(() => {
    idle = true;
  });
  await vi.advanceTimersByTimeAsync(0); // the start-up pass begins, and runs on
  expect(idle).toBe(false);
  finish();
  await quiet;
  expect(idle).toBe(true);
  await schedule.stop();
});

it("is idle at once after a stop that came before the start-up pass", async () => {
  const schedule = schedulePasses(
    () => Promise.resolve(),
    1000,
    () => {},
    { atStart: true },
  );
  await schedule.stop();
  await schedule.idle(); // resolves: no pass will ever run
});
