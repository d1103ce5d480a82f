/**
 * The one table from domain error codes (errors of layers that know nothing of HTTP) to problems:
 * each code's status and problem code, and the pointer the edge adds from the input a caller named.
 */
import { describe, expect, it } from "vitest";
import { DOMAIN_PROBLEMS, domainProblem } from "../../src/http/domain-problems.js";
import { PROBLEMS } from "../../src/problems.js";
import { IMAGE_ERROR_CODES, ImageError } from "../../src/images/errors.js";
import { ZIP_ERROR_CODES, ZipError, type ZipErrorReason } from "../../src/zip/errors.js";

describe("the domain problem table", () => {
  it.each([
    ["ZIP_CORRUPT", 400, "VALIDATION_FAILED"],
    ["ZIP_UNSUPPORTED", 400, "VALIDATION_FAILED"],
    ["ZIP_UNSAFE_PATH", 400, "VALIDATION_FAILED"],
    ["ZIP_LIMIT", 400, "VALIDATION_FAILED"],
    ["ZIP_NO_START_PAGE", 400, "VALIDATION_FAILED"],
    ["IMAGE_PARAM_INVALID", 400, "VALIDATION_FAILED"],
    ["IMAGE_BUSY", 503, "UNAVAILABLE"],
    ["TRANSFORM_UNAVAILABLE", 501, "TRANSFORM_UNAVAILABLE"],
    ["NOT_TRANSFORMABLE", 422, "NOT_TRANSFORMABLE"],
    ["IMAGE_TOO_LARGE", 422, "IMAGE_TOO_LARGE"],
  ] as const)("%s → %i %s", (code, status, problem) => {
    expect(DOMAIN_PROBLEMS[code]).toBe(problem);
    expect(PROBLEMS[DOMAIN_PROBLEMS[code]].status).toBe(status);
  });

  it("lists every zip and image code, and nothing else", () => {
    expect(Object.keys(DOMAIN_PROBLEMS).sort()).toEqual(
      [...Object.values(ZIP_ERROR_CODES), ...IMAGE_ERROR_CODES].sort(),
    );
  });
});

describe("domainProblem", () => {
  it.each(Object.keys(ZIP_ERROR_CODES) as ZipErrorReason[])(
    "a %s ZipError keeps its detail and points at the input it came from",
    (reason) => {
      const err = new ZipError(reason, 'zip entry "../x" escapes').from("/body/file");
      expect(err.code).toBe(ZIP_ERROR_CODES[reason]);
      const problem = domainProblem(err);
      expect(problem).toMatchObject({ code: "VALIDATION_FAILED", status: 400, message: err.message, cause: err });
      expect(problem?.errors).toEqual([{ pointer: "/body/file", detail: err.message }]);
    },
  );

  it("names no field when no caller said where the archive came from", () => {
    const problem = domainProblem(new ZipError("corrupt", "not a zip"));
    expect(problem?.status).toBe(400);
    expect(problem?.errors).toBeUndefined();
  });

  it("leaves any other error alone", () => {
    expect(domainProblem(new Error("boom"))).toBeNull();
    expect(domainProblem("text")).toBeNull();
  });
});

describe("domainProblem of an ImageError", () => {
  it("names the parameter at fault with its own detail", () => {
    const detail = "must be an integer from 1 to 6000";
    const err = new ImageError("IMAGE_PARAM_INVALID", `invalid query: width ${detail}`, {
      field: { pointer: "/query/width", detail },
    });
    const problem = domainProblem(err);
    expect(problem).toMatchObject({ code: "VALIDATION_FAILED", status: 400, message: err.message, cause: err });
    expect(problem?.errors).toEqual([{ pointer: "/query/width", detail }]);
    expect(problem?.headers).toBeUndefined();
  });

  it("tells a busy client when to come back", () => {
    const problem = domainProblem(
      new ImageError("IMAGE_BUSY", "the image transform took longer than 1 s", { retryAfterSeconds: 5 }),
    );
    expect(problem).toMatchObject({ code: "UNAVAILABLE", status: 503 });
    expect(problem?.headers).toEqual({ "retry-after": "5" });
    expect(problem?.errors).toBeUndefined();
  });
});
