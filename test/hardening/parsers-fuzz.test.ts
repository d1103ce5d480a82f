// Issue 14 §4: the hand-written parsers kept instead of a library (docs/library-decisions.md) each
// get a property-based test. Oracles: node:net for IP literals, exact round trips for valid
// input, and for hostile bytes "only the parser's own 4xx error, never anything else".
import net from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ProblemError } from "../../src/problems.js";
import { isGlobalUnicast, parseIPv4, parseIPv6, specialPurposeRange } from "../../src/origin/ip-address.js";
import { parseMultipart } from "../../src/http/multipart.js";
import { openZip, ZipError } from "../../src/zip/reader.js";
import { buildZip, drain, memorySource } from "../helpers/zip-writer.js";
import { report, scaled } from "./scale.js";

const RUNS = scaled(300, 20_000);
const enc = new TextEncoder();

const octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
const dotted = (o: number[]) => o.join(".");

/** Blocks that must never count as global, as node:net's own BlockList sees them. */
const notGlobal = new net.BlockList();
for (const [a, p] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  notGlobal.addSubnet(a, p, "ipv4");
}
for (const [a, p] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  notGlobal.addSubnet(a, p, "ipv6");
}

describe("ip-address (kept over ipaddr.js): properties", () => {
  it("any string: never throws, and only a literal node:net accepts can be global", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.ipV4Extended()), (s) => {
        const reason = specialPurposeRange(s);
        if (reason === null) expect(net.isIP(s)).not.toBe(0);
      }),
      { numRuns: RUNS },
    );
  });

  it("IPv4: parses to the right number, and every address node:net's BlockList holds is refused", () => {
    fc.assert(
      fc.property(octets, (o) => {
        const text = dotted(o);
        expect(parseIPv4(text)).toBe(((o[0] << 24) | (o[1] << 16) | (o[2] << 8) | o[3]) >>> 0);
        if (notGlobal.check(text, "ipv4")) expect(isGlobalUnicast(text)).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });

  it("IPv4 embedded in ::ffff:, 64:ff9b:: and 2002:: is classified as the IPv4 address", () => {
    fc.assert(
      fc.property(octets, (o) => {
        const v4 = dotted(o);
        const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
        const global = isGlobalUnicast(v4);
        expect(isGlobalUnicast(`::ffff:${v4}`)).toBe(global);
        expect(isGlobalUnicast(`64:ff9b::${v4}`)).toBe(global);
        expect(isGlobalUnicast(`2002:${hex(o[0], o[1])}:${hex(o[2], o[3])}::1`)).toBe(global);
      }),
      { numRuns: RUNS },
    );
  });

  it("IPv6: every spelling node:net accepts parses to the groups the WHATWG URL parser sees", () => {
    fc.assert(
      fc.property(fc.ipV6(), (text) => {
        const groups = parseIPv6(text);
        expect(groups).not.toBeNull();
        const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
        expect(parseIPv6(canonical)).toEqual(groups);
        if (notGlobal.check(text, "ipv6")) expect(isGlobalUnicast(text)).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });
});

/** A pull-only stream of `bytes` cut at `cuts`. */
function cutStream(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const edges = [0, ...[...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  let k = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (k + 1 >= edges.length) return controller.close();
        controller.enqueue(bytes.slice(edges[k], edges[k + 1]));
        k++;
      },
    },
    { highWaterMark: 0 },
  );
}

async function readAllParts(body: ReadableStream<Uint8Array>, boundary: string): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const part of parseMultipart(body, `multipart/form-data; boundary=${boundary}`)) {
    const { bytes, error } = await drain(part.body);
    if (error) throw error;
    out.push(bytes);
  }
  return out;
}

function concat(parts: (string | Uint8Array)[]): Uint8Array {
  const bytes = parts.map((p) => (typeof p === "string" ? enc.encode(p) : p));
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  bytes.reduce((at, b) => (out.set(b, at), at + b.length), 0);
  return out;
}

describe("multipart (kept over @mjackson/multipart-parser): properties", () => {
  const boundary = "fuzz-boundary-x7";
  // Content rich in near-boundaries: CR, LF, dashes and prefixes of the delimiter.
  const fragment = fc.constantFrom("\r\n", "--", "\r\n--fuzz-bo", `--${boundary}`, "\r").map((s) => enc.encode(s));
  const tricky = fc.array(fc.oneof(fc.uint8Array({ maxLength: 40 }), fragment), { maxLength: 12 }).map(concat);
  const cuts = fc.array(fc.nat(2000), { maxLength: 8 });

  it("valid bodies round-trip exactly under any chunking", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(tricky, { minLength: 1, maxLength: 4 }), cuts, async (contents, at) => {
        // A content may not contain the delimiter itself (RFC 2046 §5.1.1); skip the few that do.
        const latin1 = (c: Uint8Array) => new TextDecoder("latin1").decode(c);
        fc.pre(
          contents.every((c) => !latin1(c).includes(`\r\n--${boundary}`) && !latin1(c).startsWith(`--${boundary}`)),
        );
        const body = concat([
          ...contents.flatMap((c, i) => [
            `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\n`,
            c,
            "\r\n",
          ]),
          `--${boundary}--\r\n`,
        ]);
        const parts = await readAllParts(cutStream(body, at), boundary);
        expect(parts).toEqual(contents);
      }),
      { numRuns: RUNS },
    );
  });

  it("hostile bodies end in a 4xx ProblemError or a clean parse, never another error", async () => {
    let rejected = 0;
    const valid = concat([
      `--${boundary}\r\nContent-Disposition: form-data; name="a"; filename="x.txt"\r\n\r\nhello\r\n`,
      `--${boundary}--\r\n`,
    ]);
    const hostile = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc
        .tuple(fc.nat(valid.length - 1), fc.uint8Array({ minLength: 1, maxLength: 8 }))
        .map(([at, junk]) => concat([valid.slice(0, at), junk, valid.slice(at + junk.length)])),
      fc.nat(valid.length).map((n) => valid.slice(0, n)),
    );
    await fc.assert(
      fc.asyncProperty(hostile, cuts, async (body, at) => {
        try {
          await readAllParts(cutStream(body, at), boundary);
        } catch (err) {
          expect(err).toBeInstanceOf(ProblemError);
          expect((err as ProblemError).status).toBeGreaterThanOrEqual(400);
          expect((err as ProblemError).status).toBeLessThan(500);
          rejected++;
        }
      }),
      { numRuns: RUNS },
    );
    report("parsers-fuzz multipart", { runs: RUNS, rejected });
  });
});

describe("zip reader (kept over fflate / zip.js): properties", () => {
  it("damaged archives end in ZipError or correct content, never another error", async () => {
    const files = [
      { name: "index.html", data: "<html>hello</html>".repeat(20) },
      { name: "a/b.txt", data: "b".repeat(500), method: 0 },
      { name: "c.bin", data: "xyz".repeat(300), dataDescriptor: true },
    ];
    const good = await buildZip(files);
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.array(fc.tuple(fc.nat(good.length - 1), fc.nat(255)), { minLength: 1, maxLength: 6 }),
          fc.nat(good.length - 1).map((n) => [[-n, 0]] as [number, number][]),
        ),
        async (edits) => {
          let bytes = Uint8Array.from(good);
          for (const [at, value] of edits) {
            if (at < 0) bytes = bytes.slice(0, -at);
            else bytes[at] = value;
          }
          try {
            const zip = await openZip(memorySource(bytes));
            for (const entry of zip.entries) {
              const { bytes: content, error } = await drain(zip.open(entry));
              if (error) throw error;
              // Whatever passes every check (sizes, CRC-32) must be what was stored under that name.
              const original = files.find((f) => f.name === entry.path);
              if (original) expect(new TextDecoder().decode(content)).toBe(original.data);
            }
          } catch (err) {
            if (!(err instanceof ZipError)) throw err;
            rejected++;
          }
        },
      ),
      { numRuns: RUNS },
    );
    report("parsers-fuzz zip", { runs: RUNS, rejected });
  });
});
