/** Progress bars (cli-progress) on stderr, only for a person watching: never when it is not a TTY. */
import { SingleBar } from "cli-progress";

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];
export function formatBytes(n: number): string {
  let i = 0;
  while (n >= 1024 && i < UNITS.length - 1) (n /= 1024), i++;
  return `${i ? n.toFixed(1) : n} ${UNITS[i]}`;
}

export interface ProgressBar {
  update(done: number, total: number | undefined): void;
  stop(): void;
}

export function progressBar(label: string, quiet: boolean): ProgressBar {
  if (quiet || !process.stderr.isTTY) return { update() {}, stop() {} };
  const started = Date.now();
  const bar = new SingleBar({
    stream: process.stderr,
    format: `${label} {bar} {percentage}% | {done}/{size} | {rate}/s | ETA {eta_formatted}`,
    hideCursor: true,
    etaBuffer: 50,
  });
  let running = false;
  return {
    update(done, total) {
      const payload = {
        done: formatBytes(done),
        size: total === undefined ? "?" : formatBytes(total),
        rate: formatBytes(done / Math.max((Date.now() - started) / 1000, 0.001)),
      };
      if (!running) bar.start(total ?? 0, done, payload), (running = true);
      else bar.update(done, payload);
    },
    stop() {
      if (running) bar.stop();
    },
  };
}
