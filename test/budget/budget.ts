/**
 * The work budget (work-budget.json) and the check every lane makes against it: a batch of
 * `requests` requests of one kind may do at most budget × requests + slack of a count; over it, the
 * failure names the kind, the count, the budget and what was counted.
 */
import { readFileSync } from "node:fs";
import type { KindName } from "./request-kinds.js";

export interface WorkBudget {
  requests: number;
  statements: { slack: number; perRequest: Partial<Record<KindName, number>> };
  storage: { slack: number; perRequest: Partial<Record<KindName, number>> };
  syscalls: { slack: { fraction: number; absolute: number }; perRequest: Partial<Record<KindName, number>> };
}

export const BUDGET = JSON.parse(readFileSync(new URL("./work-budget.json", import.meta.url), "utf8")) as WorkBudget;

/** The settings both lanes run the service with (the shipped defaults otherwise). */
export const SERVICE_ENV = {
  CMS_LOG_LEVEL: "info",
  CMS_LINK_SECRET: "work-budget-link-secret-0123456789abcdef",
  // Signed links need an origin to be minted on; the tests use their path and query only.
  CMS_PUBLIC_URL: "http://127.0.0.1:9",
  // The webhook outbox's poll (a write transaction a second, even with no webhooks) would land
  // inside batches at random: polled once an hour here, so each batch holds the requests' work only.
  CMS_WEBHOOK_POLL_MS: "3600000",
};

/** `CMS_BUDGET=print`: report the counts without failing (to write a first budget or lower one). */
export const printOnly = process.env.CMS_BUDGET === "print";

export interface Counted {
  kind: KindName;
  total: number;
  /** What was counted, for the failure message (e.g. each statement's SQL, or strace's table). */
  detail: string;
}

/** The kinds over their budget, as one message (empty: all within). */
export function overBudget(
  what: string,
  counted: Counted[],
  perRequest: Partial<Record<KindName, number>>,
  allowance: (budget: number) => number,
): string {
  const lines: string[] = [];
  for (const c of counted) {
    const budget = perRequest[c.kind];
    if (budget === undefined) {
      lines.push(
        `${c.kind}: no ${what} budget in test/budget/work-budget.json (counted ${c.total} for ${BUDGET.requests} requests)`,
      );
      continue;
    }
    const limit = allowance(budget);
    if (c.total > limit)
      lines.push(
        `${c.kind}: ${c.total} ${what} for ${BUDGET.requests} requests (${(c.total / BUDGET.requests).toFixed(2)} a request), budget ${budget} a request → at most ${limit}\n${c.detail}`,
      );
  }
  return lines.join("\n\n");
}

export function report(what: string, counted: Counted[]) {
  process.stdout.write(
    `${what} per request: ${counted.map((c) => `${c.kind} ${(c.total / BUDGET.requests).toFixed(2)}`).join(", ")}\n${printOnly ? counted.map((c) => `${c.kind}:\n${c.detail}`).join("\n") : ""}\n`,
  );
}
