/**
 * A clock the test moves by hand, in the shape of AppDeps["clock"]: code given it sees time pass only
 * when the test calls `advance`, so expiry and cool-down tests need no sleeps and do not race a loaded machine.
 */
export interface FakeClock {
  /** Pass this where a `clock: () => Date` is wanted. */
  clock: () => Date;
  /** The clock's time in epoch milliseconds. */
  nowMs(): number;
  advance(ms: number): void;
}

/** Starts at the real time (tokens and locks minted "now" stay valid) and then stands still. */
export function fakeClock(startMs = Date.now()): FakeClock {
  let now = startMs;
  return {
    clock: () => new Date(now),
    nowMs: () => now,
    advance(ms) {
      now += ms;
    },
  };
}
