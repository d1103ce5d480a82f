/**
 * The Node/Bun collector schedule reads the app's clock: its daily storage sweep falls due when the
 * clock given it has moved a day, not the machine's. The interval timer is vitest's (Date is not
 * faked, so a schedule that read Date.now() would never see the day pass).
 */
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { silentLogger } from "../../src/lib/logger.js";
import { scheduleCollector } from "../../src/runtime/host/collector-schedule.js";
import type { BlobCollector } from "../../src/services/blob-collector.js";
import { fakeClock } from "../helpers/fake-clock.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
});
afterEach(() => {
  vi.useRealTimers();
});

it("sweeps at start, passes every interval, and sweeps again once the app clock has moved a day", async () => {
  const calls: string[] = [];
  const collector = {
    sweep: async () => void calls.push("sweep"),
    pass: async () => {
      calls.push("pass");
      return { removed: 0, kept: 0, takenOver: 0, uploadsExpired: 0, derivativesEvicted: 0, stagedRemoved: 0 };
    },
  } as unknown as BlobCollector;
  const time = fakeClock();
  const schedule = scheduleCollector(collector, 1000, silentLogger, time.clock);
  await vi.advanceTimersByTimeAsync(0);
  expect(calls).toEqual(["sweep", "pass"]);
  await vi.advanceTimersByTimeAsync(1000);
  expect(calls).toEqual(["sweep", "pass", "pass"]);
  time.advance(24 * 60 * 60 * 1000);
  await vi.advanceTimersByTimeAsync(1000);
  expect(calls).toEqual(["sweep", "pass", "pass", "sweep", "pass"]);
  await schedule.stop();
});
