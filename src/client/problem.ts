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

  /**
   * Reads a failed response's problem document; tolerates proxies that answer HTML or nothing, and
   * a body cut off (the connection reset after an early refusal): the status still says what it was.
   */
  static async from(response: Response): Promise<CmsProblem> {
    const retry = Number(response.headers.get("retry-after"));
    const retryAfter = Number.isFinite(retry) && retry > 0 ? retry : undefined;
    try {
      const body = (await response.json()) as Problem;
      if (typeof body?.code === "string" && typeof body.status === "number") return new CmsProblem(body, retryAfter);
    } catch {
      // not JSON: fall through to a problem made from the status
    }
    return CmsProblem.ofStatus(response, retryAfter);
  }

  /** A problem made from the status alone, when no problem document came. */
  static ofStatus(response: Response, retryAfter?: number): CmsProblem {
    const { status, statusText } = response;
    return new CmsProblem(
      {
        type: "about:blank",
        title: statusText,
        status,
        detail: `HTTP ${status} ${statusText}`.trimEnd(),
        code: codeOf(status),
      },
      retryAfter,
    );
  }
}

/**
 * The server's code for each status that has one code (its PROBLEMS table; typed by the document's
 * enum, so a code it drops fails to compile): what a refusal without its problem document meant.
 */
const CODE_OF_STATUS: Record<number, Problem["code"]> = {
  400: "VALIDATION_FAILED",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  408: "REQUEST_TIMEOUT",
  412: "PRECONDITION_FAILED",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  416: "RANGE_NOT_SATISFIABLE",
  423: "LOCKED",
  431: "HEADERS_TOO_LARGE",
  503: "UNAVAILABLE",
  507: "INSUFFICIENT_STORAGE",
};

const codeOf = (status: number): Problem["code"] =>
  CODE_OF_STATUS[status] ?? (status >= 500 ? "INTERNAL" : "VALIDATION_FAILED");

/** The downloaded bytes do not hash to the resource's SHA-256. */
export class ChecksumMismatch extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`SHA-256 mismatch: expected ${expected}, got ${actual}`);
    this.name = "ChecksumMismatch";
  }
}
