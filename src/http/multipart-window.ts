/**
 * Byte plumbing for the multipart parser: a window of unconsumed source bytes and a
 * Boyer-Moore-Horspool search for the part delimiter.
 */

/**
 * Unconsumed source bytes `buf[off, end)`. Views handed to a consumer are never written to or kept
 * (they may be transferred), so handing one out re-homes the remainder in a fresh copy.
 */
export class Window {
  buf: Uint8Array = new Uint8Array(0);
  off = 0;
  end = 0;
  private writable = false;

  get length(): number {
    return this.end - this.off;
  }

  append(chunk: Uint8Array): void {
    const rest = this.length;
    if (rest === 0) {
      [this.buf, this.off, this.end, this.writable] = [chunk, 0, chunk.length, false];
    } else if (this.writable && this.end + chunk.length <= this.buf.length) {
      this.buf.set(chunk, this.end);
      this.end += chunk.length;
    } else {
      // Grow geometrically so a header block arriving byte by byte stays linear.
      const next = new Uint8Array(Math.max(rest + chunk.length, rest * 2));
      next.set(this.buf.subarray(this.off, this.end));
      next.set(chunk, rest);
      [this.buf, this.off, this.end, this.writable] = [next, 0, rest + chunk.length, true];
    }
  }

  /** Hands out the next `n` bytes as a view. */
  take(n: number): Uint8Array {
    const view = this.buf.subarray(this.off, this.off + n);
    const rest = this.buf.slice(this.off + n, this.end);
    [this.buf, this.off, this.end, this.writable] = [rest, 0, rest.length, true];
    return view;
  }

  skip(n: number): void {
    this.off += n;
  }

  byte(i: number): number {
    return this.buf[this.off + i]!;
  }
}

/**
 * Boyer-Moore-Horspool over `needle` (a multipart delimiter, at most 74 bytes, so a byte holds every
 * shift): returns the first full match in `hay[from, to)`, or -1.
 */
export function horspool(needle: Uint8Array): (hay: Uint8Array, from: number, to: number) => number {
  const last = needle.length - 1;
  const tail = needle[last]!;
  const shift = new Uint8Array(256).fill(needle.length);
  for (let i = 0; i < last; i++) shift[needle[i]!] = last - i;
  return (hay, from, to) => {
    for (let i = from; i + last < to; ) {
      const c = hay[i + last]!;
      if (c === tail) {
        let j = last - 1;
        while (j >= 0 && hay[i + j] === needle[j]) j--;
        if (j < 0) return i;
      }
      i += shift[c]!;
    }
    return -1;
  };
}
