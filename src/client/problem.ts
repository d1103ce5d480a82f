/** Errors of the typed client: the server's RFC 9457 problem, typed as the document declares it. */
import type { components } from "./openapi.js";

export type Problem = components["schemas"]["Problem"];

/** A non-2xx answer. `problem` is the server's problem+json body (synthesised if it sent none). */
export class CmsProblem extends Error {
  readonly status: number;
  readonly problem: Problem;
  readonly retryAfter?: number;

  constructor(problem: Problem, retryAfter?: number) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.name = "CmsProblem";
    this.status = problem.status;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }

  /** Reads a failed response's problem document; tolerates proxies that answer HTML or nothing. */
  static async from(response: Response): Promise<CmsProblem> {
    const retry = Number(response.headers.get("retry-after"));
    const retryAfter = Number.isFinite(retry) && retry > 0 ? retry : undefined;
    try {
      const body = (await response.json()) as Problem;
      if (typeof body?.code === "string" && typeof body.status === "number") return new CmsProblem(body, retryAfter);
    } catch {
      // not JSON: fall through to a problem made from the status
    }
    const code = response.status >= 500 ? "INTERNAL" : "VALIDATION_FAILED";
    return new CmsProblem({ type: "about:blank", title: response.statusText, status: response.status, detail: `HTTP ${response.status} ${response.statusText}`, code }, retryAfter);
  }
}

/** The downloaded bytes do not hash to the resource's SHA-256. */
export class ChecksumMismatch extends Error {
  constructor(readonly expected: string, readonly actual: string) {
    super(`SHA-256 mismatch: expected ${expected}, got ${actual}`);
    this.name = "ChecksumMismatch";
  }
}
