/** Checks every blob driver shares, so their range errors read the same. */
import type { ByteRange } from "../../blob-store.js";

/** Throws RangeError unless start..end are safe integers with 0 <= start <= end. */
export function checkRangeShape({ start, end }: ByteRange): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new RangeError(`byte range ${start}-${end} is not a valid range`);
  }
}

/** The RangeError for a range that ends at or past a blob of `size` bytes. */
export const rangeOutside = ({ start, end }: ByteRange, size: number) =>
  new RangeError(`byte range ${start}-${end} is outside a blob of ${size} bytes`);

/** Throws RangeError unless the range is well formed and lies inside a blob of `size` bytes. */
export function checkRange(range: ByteRange, size: number): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end >= size) {
    throw rangeOutside(range, size);
  }
}
