/**
 * A minimal, strict parser of the Prometheus text exposition format (version 0.0.4): what a scraper
 * reads from GET /metrics. Every line must be a comment, a HELP/TYPE line or a sample, or it throws.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples: Sample[];
  /** Metric family → its TYPE. */
  types: Map<string, string>;
  /** Samples of `name` whose labels include `labels`. */
  find(name: string, labels?: Record<string, string>): Sample[];
  /** The sum of those samples' values (0 when none). */
  value(name: string, labels?: Record<string, string>): number;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    if (!m) throw new Error(`bad labels in: ${line}`);
    const [, key, raw] = m as unknown as [string, string, string];
    labels[key] = raw.replace(/\\(["\\n])/g, (_s, c: string) => (c === "n" ? "\n" : c));
  }
  return labels;
}

const number = (text: string, line: string) => {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  // Prometheus parses values with Go's ParseFloat: NaN in any case (prom-client 15 writes "Nan").
  if (text.toLowerCase() === "nan") return Number.NaN;
  const value = Number(text);
  if (text === "" || Number.isNaN(value)) throw new Error(`bad value in: ${line}`);
  return value;
};

export function parsePromText(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = new RegExp(`^# (HELP|TYPE) (${NAME}) ?(.*)$`).exec(line);
      if (m?.[1] === "TYPE") {
        if (!/^(counter|gauge|histogram|summary|untyped)$/.test(m[3] ?? "")) throw new Error(`bad TYPE: ${line}`);
        types.set(m[2] as string, m[3] as string);
      }
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    samples.push({
      name: m[1] as string,
      labels: m[2] ? parseLabels(m[2], line) : {},
      value: number(m[3] as string, line),
    });
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return { samples, types, find, value: (name, labels) => find(name, labels).reduce((sum, s) => sum + s.value, 0) };
}
