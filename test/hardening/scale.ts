/** Quick figures inside `npm test`, long ones under `npm run test:hardening` (HARDENING=full). */
export const FULL = process.env.HARDENING === "full";

/** `quick` in `npm test`, `full` under `npm run test:hardening`. */
export const scaled = (quick: number, full: number): number => (FULL ? full : quick);

/** Prints a suite's figures in one greppable line: `[hardening] <suite> key=value …`. */
export function report(suite: string, figures: Record<string, string | number>): void {
  const parts = Object.entries(figures).map(([k, v]) => `${k}=${v}`);
  console.log(`[hardening] ${suite} ${parts.join(" ")}`);
}
