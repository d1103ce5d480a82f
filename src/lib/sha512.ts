/**
 * Incremental SHA-512 (FIPS 180-4 §6.4) in plain TypeScript, for request digests clients send as
 * `sha-512` (RFC 9530): Web Crypto hashes only whole buffers, and a streamed body is never held.
 * 64-bit words are kept as [high, low] pairs of 32-bit integers.
 */
import { BlockHash } from "./block-hash.js";

const BLOCK_BYTES = 128;

/** floor(x^(1/n)) of a BigInt, by Newton's method from above. */
function integerRoot(x: bigint, n: bigint): bigint {
  let r = 1n << (BigInt(x.toString(2).length) / n + 1n);
  for (;;) {
    const next = ((n - 1n) * r + x / r ** (n - 1n)) / n;
    if (next >= r) return r;
    r = next;
  }
}

/** The first `count` primes. */
function primes(count: number): bigint[] {
  const out: bigint[] = [];
  for (let p = 2n; out.length < count; p++) if (out.every((q) => p % q !== 0n)) out.push(p);
  return out;
}

/** The first 64 bits of the fractional part of each prime's n-th root (§4.2.3, §5.3.5), as [high, low] words. */
function fractionWords(count: number, n: bigint): Uint32Array {
  const words = new Uint32Array(count * 2);
  primes(count).forEach((p, i) => {
    const bits = integerRoot(p << (64n * n), n) & ((1n << 64n) - 1n);
    words[i * 2] = Number(bits >> 32n);
    words[i * 2 + 1] = Number(bits & 0xffffffffn);
  });
  return words;
}

const K = fractionWords(80, 3n);
const INITIAL_STATE = fractionWords(8, 2n);

/** Processes one 128-byte block of `data` at `offset` into `state` (§6.4.2); `w` is scratch space (160 words). */
function compress(state: Uint32Array, w: Uint32Array, data: Uint8Array, offset: number): void {
  const view = new DataView(data.buffer, data.byteOffset + offset, BLOCK_BYTES);
  for (let i = 0; i < 32; i++) w[i] = view.getUint32(i * 4);
  for (let t = 16; t < 80; t++) {
    // σ0(x) = ROTR1 ^ ROTR8 ^ SHR7, σ1(y) = ROTR19 ^ ROTR61 ^ SHR6
    const xh = w[(t - 15) * 2]!,
      xl = w[(t - 15) * 2 + 1]!;
    const s0h = ((xh >>> 1) | (xl << 31)) ^ ((xh >>> 8) | (xl << 24)) ^ (xh >>> 7);
    const s0l = ((xl >>> 1) | (xh << 31)) ^ ((xl >>> 8) | (xh << 24)) ^ ((xl >>> 7) | (xh << 25));
    const yh = w[(t - 2) * 2]!,
      yl = w[(t - 2) * 2 + 1]!;
    const s1h = ((yh >>> 19) | (yl << 13)) ^ ((yl >>> 29) | (yh << 3)) ^ (yh >>> 6);
    const s1l = ((yl >>> 19) | (yh << 13)) ^ ((yh >>> 29) | (yl << 3)) ^ ((yl >>> 6) | (yh << 26));
    const lo = (s0l >>> 0) + (s1l >>> 0) + w[(t - 16) * 2 + 1]! + w[(t - 7) * 2 + 1]!;
    w[t * 2] = s0h + s1h + w[(t - 16) * 2]! + w[(t - 7) * 2]! + Math.floor(lo / 0x100000000);
    w[t * 2 + 1] = lo;
  }
  let ah = state[0]!,
    al = state[1]!,
    bh = state[2]!,
    bl = state[3]!,
    ch = state[4]!,
    cl = state[5]!,
    dh = state[6]!,
    dl = state[7]!;
  let eh = state[8]!,
    el = state[9]!,
    fh = state[10]!,
    fl = state[11]!,
    gh = state[12]!,
    gl = state[13]!,
    hh = state[14]!,
    hl = state[15]!;
  for (let t = 0; t < 80; t++) {
    // Σ1(e) = ROTR14 ^ ROTR18 ^ ROTR41, Ch(e, f, g); Σ0(a) = ROTR28 ^ ROTR34 ^ ROTR39, Maj(a, b, c)
    const S1h = ((eh >>> 14) | (el << 18)) ^ ((eh >>> 18) | (el << 14)) ^ ((el >>> 9) | (eh << 23));
    const S1l = ((el >>> 14) | (eh << 18)) ^ ((el >>> 18) | (eh << 14)) ^ ((eh >>> 9) | (el << 23));
    const chh = (eh & fh) ^ (~eh & gh);
    const chl = (el & fl) ^ (~el & gl);
    const t1l = (hl >>> 0) + (S1l >>> 0) + (chl >>> 0) + K[t * 2 + 1]! + w[t * 2 + 1]!;
    const t1h = hh + S1h + chh + K[t * 2]! + w[t * 2]! + Math.floor(t1l / 0x100000000);
    const S0h = ((ah >>> 28) | (al << 4)) ^ ((al >>> 2) | (ah << 30)) ^ ((al >>> 7) | (ah << 25));
    const S0l = ((al >>> 28) | (ah << 4)) ^ ((ah >>> 2) | (al << 30)) ^ ((ah >>> 7) | (al << 25));
    const majh = (ah & bh) ^ (ah & ch) ^ (bh & ch);
    const majl = (al & bl) ^ (al & cl) ^ (bl & cl);
    const t2l = (S0l >>> 0) + (majl >>> 0);
    const t2h = S0h + majh + Math.floor(t2l / 0x100000000);
    hh = gh;
    hl = gl;
    gh = fh;
    gl = fl;
    fh = eh;
    fl = el;
    const el2 = (dl >>> 0) + (t1l >>> 0);
    eh = (dh + t1h + Math.floor(el2 / 0x100000000)) | 0;
    el = el2 | 0;
    dh = ch;
    dl = cl;
    ch = bh;
    cl = bl;
    bh = ah;
    bl = al;
    const al2 = (t1l >>> 0) + (t2l >>> 0);
    ah = (t1h + t2h + Math.floor(al2 / 0x100000000)) | 0;
    al = al2 | 0;
  }
  const add = (i: number, h: number, l: number) => {
    const lo = state[i + 1]! + (l >>> 0);
    state[i] = state[i]! + h + Math.floor(lo / 0x100000000);
    state[i + 1] = lo;
  };
  add(0, ah, al);
  add(2, bh, bl);
  add(4, ch, cl);
  add(6, dh, dl);
  add(8, eh, el);
  add(10, fh, fl);
  add(12, gh, gl);
  add(14, hh, hl);
}

/** A running SHA-512: `update` with each chunk (any sizes), then `digest`/`hex` once. */
export class Sha512 extends BlockHash {
  readonly #state = INITIAL_STATE.slice();
  readonly #w = new Uint32Array(160);

  constructor() {
    super(BLOCK_BYTES, 16);
  }

  protected compress(data: Uint8Array, offset: number): void {
    compress(this.#state, this.#w, data, offset);
  }

  protected output(): Uint8Array {
    const out = new Uint8Array(64);
    const view = new DataView(out.buffer);
    for (let i = 0; i < 16; i++) view.setUint32(i * 4, this.#state[i]!);
    return out;
  }
}
