/** Assertion helper: the ProblemError a synchronous call throws (fails the test if it throws nothing else). */
import { expect } from "vitest";
import { ProblemError } from "../../src/problems.js";

export function thrownProblem(fn: () => unknown): ProblemError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ProblemError);
    return err as ProblemError;
  }
  throw new Error("expected a ProblemError");
}
