/**
 * The one table from domain error codes to problems. Layers below the services (zip/, start-page/,
 * images/) throw errors with their own stable codes and know nothing of HTTP; a service passes them
 * on, telling them which input they concern (a request pointer it was handed as a plain value);
 * here, at the edge, each code gets its problem code (hence its status) and that input its pointer.
 */
import { ImageError, type ImageErrorCode } from "../images/errors.js";
import { type ProblemCode, ProblemError } from "../problems.js";
import { ZipError, type ZipErrorCode } from "../zip/errors.js";

export type DomainCode = ZipErrorCode | ImageErrorCode;

export const DOMAIN_PROBLEMS = {
  // Every refusal of a package is the content's fault: 400, naming the field the zip came from.
  ZIP_CORRUPT: "VALIDATION_FAILED",
  ZIP_UNSUPPORTED: "VALIDATION_FAILED",
  ZIP_UNSAFE_PATH: "VALIDATION_FAILED",
  ZIP_LIMIT: "VALIDATION_FAILED",
  ZIP_NO_START_PAGE: "VALIDATION_FAILED",
  // Image derivatives: a bad parameter is 400 naming it; a busy or slow transform 503 with Retry-After.
  IMAGE_PARAM_INVALID: "VALIDATION_FAILED",
  IMAGE_PARAM_FORBIDDEN: "FORBIDDEN",
  IMAGE_BUSY: "UNAVAILABLE",
  TRANSFORM_UNAVAILABLE: "TRANSFORM_UNAVAILABLE",
  NOT_TRANSFORMABLE: "NOT_TRANSFORMABLE",
  IMAGE_TOO_LARGE: "IMAGE_TOO_LARGE",
} as const satisfies Record<DomainCode, ProblemCode>;

/** The problem a domain error stands for (its message as detail), or null for any other error. */
export function domainProblem(err: unknown): ProblemError | null {
  if (err instanceof ImageError) {
    const { field, retryAfterSeconds } = err;
    return new ProblemError(DOMAIN_PROBLEMS[err.code], err.message, {
      errors: field && [{ pointer: field.pointer, detail: field.detail }],
      headers: retryAfterSeconds === undefined ? undefined : { "retry-after": String(retryAfterSeconds) },
      cause: err,
    });
  }
  if (!(err instanceof ZipError)) return null;
  const detail = err.message;
  return new ProblemError(DOMAIN_PROBLEMS[err.code], detail, {
    errors: err.input === undefined ? undefined : [{ pointer: err.input, detail }],
    cause: err,
  });
}
