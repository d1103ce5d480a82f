import { describe, expect, it } from "vitest";
import { ProblemError } from "../../src/problems.js";
import { type MultipartLimits, type MultipartPart, parseMultipart, readText } from "../../src/http/multipart.js";
import { thrownProblem } from "../helpers/problems.js";

const enc = new TextEncoder();
const CT = (boundary: string) => `multipart/form-data; boundary=${boundary}`;

function concat(...parts: (string | Uint8Array)[]): Uint8Array<ArrayBuffer> {
  const bytes = parts.map((p) => (typeof p === "string" ? enc.encode(p) : p));
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  bytes.reduce((at, b) => (out.set(b, at), at + b.length), 0);
  return out;
}

/** A pull-only source (highWaterMark 0) cut at the given offsets; counts what was pulled. */
function source(bytes: Uint8Array, cuts: number[]) {
  const stats = { pulled: 0, cancelled: false as boolean, reason: undefined as unknown };
  const edges = [0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
  let k = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (k + 1 >= edges.length) return controller.close();
        const chunk = bytes.slice(edges[k], edges[k + 1]);
        k++;
        stats.pulled += chunk.length;
        controller.enqueue(chunk);
      },
      cancel(reason) {
        stats.cancelled = true;
        stats.reason = reason;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, stats };
}

const every = (size: number, length: number) => Array.from({ length: Math.ceil(length / size) }, (_, i) => i * size);

async function readAll(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return concat(...chunks);
}

interface Parsed {
  name: string;
  filename: string | null;
  contentType: string | null;
  headers: Record<string, string>;
  body: Uint8Array;
}

async function parseAll(bytes: Uint8Array, contentType: string, cuts: number[] = [], limits?: MultipartLimits) {
  const out: Parsed[] = [];
  for await (const part of parseMultipart(source(bytes, cuts).stream, contentType, limits)) {
    const { name, filename, contentType: type, headers } = part;
    out.push({
      name,
      filename,
      contentType: type,
      headers: Object.fromEntries(headers),
      body: await readAll(part.body),
    });
  }
  return out;
}

/** Parses with every chunk size and every two-way split, expecting the same result each time. */
async function parseEveryWay(bytes: Uint8Array, contentType: string, sizes?: number[]) {
  const reference = await parseAll(bytes, contentType);
  for (const size of sizes ?? Array.from({ length: bytes.length }, (_, i) => i + 1)) {
    expect(await parseAll(bytes, contentType, every(size, bytes.length)), `chunk size ${size}`).toEqual(reference);
  }
  for (let cut = 1; cut < bytes.length; cut++) {
    expect(await parseAll(bytes, contentType, [cut]), `split at ${cut}`).toEqual(reference);
  }
  return reference;
}

async function problem(promise: Promise<unknown>): Promise<ProblemError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProblemError);
  return err as ProblemError;
}

const text = (body: Uint8Array) => new TextDecoder().decode(body);

// File content full of near-misses for the delimiter "\r\n--XyZ-b0und4ry".
const TRICKY = concat(
  new Uint8Array([0, 255, 13, 10, 13, 13, 10, 45]),
  "\r\n--XyZ-b0und4r",
  "--XyZ-b0und4ry", // the boundary without the CRLF is content
  "\r\n--XyZ",
  "\r\r\n--XyZ-b0und4rX",
  "\n--XyZ-b0und4ry",
  "\r\n-",
  "\r\n--",
  "\r",
);

const HAND_BUILT = concat(
  "This is the preamble; it is ignored.\r\n",
  "--XyZ-b0und4ry\r\n",
  'Content-Disposition: form-data; name="title"\r\n',
  "\r\n",
  "Hello, wörld",
  "\r\n--XyZ-b0und4ry\r\n",
  'content-disposition: form-data; name="upload"; filename="data.bin"\r\n',
  "Content-Type: application/octet-stream\r\n",
  "X-Extra: one\r\n",
  "\r\n",
  TRICKY,
  "\r\n--XyZ-b0und4ry\r\n",
  'Content-Disposition: form-data; name="empty"; filename="empty.txt"\r\n',
  "Content-Type: text/plain\r\n",
  "\r\n",
  "\r\n--XyZ-b0und4ry--\r\n",
  "This is the epilogue. --XyZ-b0und4ry\r\n",
);

describe("parseMultipart: framing", () => {
  it("parses a hand-built body identically for every chunk size and split point", async () => {
    const parts = await parseEveryWay(HAND_BUILT, CT("XyZ-b0und4ry"));
    expect(parts).toHaveLength(3);
    expect(parts[0]).toMatchObject({ name: "title", filename: null, contentType: null });
    expect(text(parts[0]!.body)).toBe("Hello, wörld");
    expect(parts[1]).toMatchObject({
      name: "upload",
      filename: "data.bin",
      contentType: "application/octet-stream",
      headers: { "content-type": "application/octet-stream", "x-extra": "one" },
    });
    expect(parts[1]!.body).toEqual(TRICKY);
    expect(parts[2]).toMatchObject({ name: "empty", filename: "empty.txt", body: new Uint8Array() });
  }, 120_000);

  it("matches the platform's FormData encoder and parser for every chunk size and split point", async () => {
    const binary = concat(
      TRICKY,
      "\r\n--formdata-undici-0",
      "\r\n------formdata-undici",
      new Uint8Array(300).map((_, i) => (i * 7) & 255),
    );
    const form = new FormData();
    form.append("title", "naïve café ☕");
    form.append("multi\nline", "a\r\nb\nc\rd");
    form.append("file", new File([binary], 'résumé "final" 📄.bin', { type: "application/x-thing" }));
    form.append("empty", new File([], "", { type: "application/octet-stream" }));
    form.append("blank", "");
    const request = new Request("http://test.invalid/", { method: "POST", body: form });
    const contentType = request.headers.get("content-type")!;
    const bytes = new Uint8Array(await request.arrayBuffer());

    const parts = await parseEveryWay(bytes, contentType, [1, 2, 3, 7, 64, 65, 1000, bytes.length]);

    const reparsed = new Request("http://test.invalid/", {
      method: "POST",
      body: bytes,
      headers: { "content-type": contentType },
    });
    const expected = await reparsed.formData();
    const entries = [...expected];
    expect(parts.map((p) => p.name)).toEqual(entries.map(([name]) => name));
    for (const [i, [, value]] of entries.entries()) {
      const part = parts[i]!;
      if (typeof value === "string") {
        expect(part.filename).toBeNull();
        expect(text(part.body)).toBe(value);
      } else {
        expect(part.filename).toBe(value.name);
        expect(part.contentType).toBe(value.type);
        expect(part.body).toEqual(new Uint8Array(await value.arrayBuffer()));
      }
    }
    expect(parts[2]!.filename).toBe('résumé "final" 📄.bin');
    expect(parts[2]!.body).toEqual(binary);
    // undici omits filename for a nameless File (browsers send filename=""), so it reads as a field.
    expect(parts[3]).toMatchObject({ filename: null, contentType: "application/octet-stream", body: new Uint8Array() });
    expect(parts[4]).toMatchObject({ filename: null, body: new Uint8Array() });
  }, 120_000);

  it("splits exactly inside every byte of the CRLF--boundary delimiter", async () => {
    const bytes = concat(
      "--b\r\nContent-Disposition: form-data; name=a\r\n\r\nxy",
      "\r\n--b\r\n",
      "Content-Disposition: form-data; name=c\r\n\r\nz\r\n--b--",
    );
    const at = new TextDecoder().decode(bytes).indexOf("xy") + 2; // the "\r" of the first "\r\n--b"
    for (let i = at; i <= at + 7; i++) {
      for (let j = i + 1; j <= at + 8; j++) {
        const parts = await parseAll(bytes, CT("b"), [i, j]);
        expect(parts.map((p) => [p.name, text(p.body)])).toEqual([
          ["a", "xy"],
          ["c", "z"],
        ]);
      }
    }
  });

  it("accepts a boundary at the very start, transport padding and no CRLF after the close delimiter", async () => {
    const bytes = concat("--b \t\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--b--");
    const parts = await parseEveryWay(bytes, CT("b"));
    expect(parts.map((p) => [p.name, text(p.body)])).toEqual([["a", "1"]]);
  });

  it("accepts a quoted boundary with spaces and RFC 2046 punctuation", async () => {
    const boundary = "simple boundary:'()+_,-./=?";
    const bytes = concat(`--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\nv\r\n--${boundary}--\r\n`);
    const parts = await parseAll(bytes, `Multipart/Form-Data; charset=utf-8; boundary="${boundary}"`);
    expect(parts.map((p) => [p.name, text(p.body)])).toEqual([["a", "v"]]);
  });

  it("accepts a 70-character boundary and a body with no parts", async () => {
    const boundary = "x".repeat(70);
    expect(await parseAll(enc.encode(`--${boundary}--`), CT(boundary))).toEqual([]);
  });

  it("rejects a delimiter followed by anything but CRLF, padding or --", async () => {
    const bytes = enc.encode('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--bX\r\n');
    const err = await problem(parseAll(bytes, CT("b")));
    expect(err).toMatchObject({ code: "VALIDATION_FAILED", message: "malformed multipart delimiter" });
  });
});

describe("parseMultipart: Content-Type", () => {
  it.each([
    ["missing boundary", "multipart/form-data"],
    ["empty boundary", 'multipart/form-data; boundary=""'],
    ["71-character boundary", CT("x".repeat(71))],
    ["boundary ending in a space", 'multipart/form-data; boundary="abc "'],
    ["character outside RFC 2046 bchars", CT("abc#def")],
    ["unterminated quoted boundary", 'multipart/form-data; boundary="abc'],
    ["duplicate boundary", "multipart/form-data; boundary=a; boundary=b"],
    ["malformed parameters", "multipart/form-data; boundary"],
  ])("rejects a %s with 400 before reading the body", (_, contentType) => {
    const { stream, stats } = source(enc.encode("--b--"), []);
    expect(thrownProblem(() => parseMultipart(stream, contentType))).toMatchObject({
      code: "VALIDATION_FAILED",
      status: 400,
    });
    expect(stats.pulled).toBe(0);
    expect(stream.locked).toBe(false);
  });

  it.each(["", "application/json", "multipart/mixed; boundary=b", "text/plain; boundary=b"])(
    "rejects %j with 415",
    (contentType) => {
      expect(thrownProblem(() => parseMultipart(source(new Uint8Array(), []).stream, contentType))).toMatchObject({
        code: "UNSUPPORTED_MEDIA_TYPE",
        status: 415,
      });
    },
  );
});

describe("parseMultipart: part headers", () => {
  const one = (headers: string, boundary = "b") =>
    enc.encode(`--${boundary}\r\n${headers}\r\n\r\nbody\r\n--${boundary}--\r\n`);

  it("decodes filename* (RFC 8187) and prefers it over filename", async () => {
    const both = `Content-Disposition: form-data; name="f"; filename="EUR rates.txt"; filename*=UTF-8''%E2%82%AC%20rates%20%F0%9F%93%88.txt`;
    const [utf8] = await parseAll(one(both), CT("b"));
    expect(utf8!.filename).toBe("€ rates 📈.txt");
    const [latin1] = await parseAll(
      one(`Content-Disposition: form-data; name="f"; filename*=iso-8859-1'en'%A3%20rates.txt`),
      CT("b"),
    );
    expect(latin1!.filename).toBe("£ rates.txt");
  });

  it("keeps an empty filename (an empty browser file input) distinct from no filename", async () => {
    const [part] = await parseAll(one('Content-Disposition: form-data; name="f"; filename=""'), CT("b"));
    expect(part).toMatchObject({ name: "f", filename: "" });
  });

  it("reads raw UTF-8 names, backslashes and quoted-pairs in quoted strings", async () => {
    const [part] = await parseAll(
      one('Content-Disposition: form-data; name="naïve"; filename="C:\\dir\\a \\"b\\".txt"'),
      CT("b"),
    );
    expect(part).toMatchObject({ name: "naïve", filename: 'C:\\dir\\a "b".txt' });
  });

  it("unfolds obs-fold continuation lines and accepts token parameter values", async () => {
    const folded = "Content-Disposition: form-data;\r\n\tname=field;\r\n filename=x.txt\r\nContent-Type: text/plain";
    const [part] = await parseAll(one(folded), CT("b"));
    expect(part).toMatchObject({ name: "field", filename: "x.txt", contentType: "text/plain" });
  });

  it.each([
    ["no Content-Disposition", "Content-Type: text/plain"],
    ["no headers at all", ""],
    ["a non-form-data disposition", 'Content-Disposition: attachment; name="a"'],
    ["no name", 'Content-Disposition: form-data; filename="a"'],
    [
      "two Content-Dispositions",
      'Content-Disposition: form-data; name="a"\r\nContent-Disposition: form-data; name="b"',
    ],
    ["duplicate filename parameters", 'Content-Disposition: form-data; name="a"; filename="x"; filename="y"'],
    ["a malformed filename*", "Content-Disposition: form-data; name=\"a\"; filename*=UTF-8''%E2%82"],
    ["an unknown filename* charset", "Content-Disposition: form-data; name=\"a\"; filename*=koi8-r''abc"],
    ["a header line without a colon", 'Content-Disposition: form-data; name="a"\r\nbogus'],
    ["whitespace before the colon", 'Content-Disposition : form-data; name="a"'],
    ["a leading continuation line", ' x\r\nContent-Disposition: form-data; name="a"'],
  ])("rejects %s with 400", async (_, headers) => {
    expect(await problem(parseAll(one(headers), CT("b")))).toMatchObject({ code: "VALIDATION_FAILED", status: 400 });
  });

  it("rejects a header block over maxHeaderBytes with 413, accepting one exactly at the limit", async () => {
    const base = 'Content-Disposition: form-data; name="a"\r\nX-Pad: ';
    const limits = { maxHeaderBytes: 200 };
    const exact = one(base + "p".repeat(200 - base.length));
    for (const size of [1, 3, 64, exact.length]) {
      expect(await parseAll(exact, CT("b"), every(size, exact.length), limits)).toHaveLength(1);
      const over = one(base + "p".repeat(201 - base.length));
      expect(await problem(parseAll(over, CT("b"), every(size, over.length), limits))).toMatchObject({
        code: "PAYLOAD_TOO_LARGE",
      });
    }
  });

  it("rejects an unterminated header block as soon as it passes the limit (the default 16 KiB)", async () => {
    const { stream, stats } = source(concat("--b\r\nX-Pad: ", "p".repeat(1024 * 1024)), every(1024, 1024 * 1024));
    const err = await problem(parseMultipart(stream, CT("b")).next());
    expect(err).toMatchObject({ code: "PAYLOAD_TOO_LARGE", status: 413 });
    expect(stats.pulled).toBeLessThan(20 * 1024);
    expect(stats.cancelled).toBe(true);
  });

  it("limits header lines and field name length with 413", async () => {
    const lines = one(
      ['Content-Disposition: form-data; name="a"', ...Array.from({ length: 16 }, (_, i) => `X-${i}: v`)].join("\r\n"),
    );
    expect(await problem(parseAll(lines, CT("b")))).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    const name = one(`Content-Disposition: form-data; name="${"n".repeat(1025)}"`);
    expect(await problem(parseAll(name, CT("b")))).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    expect(await parseAll(name, CT("b"), [], { maxFieldNameBytes: 2000 })).toHaveLength(1);
  });
});

describe("parseMultipart: limits and failures", () => {
  const fields = (n: number) =>
    enc.encode(
      Array.from({ length: n }, (_, i) => `--b\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\n${i}\r\n`).join(
        "",
      ) + "--b--\r\n",
    );

  it("accepts maxParts parts and rejects part maxParts + 1 with 413", async () => {
    expect(await parseAll(fields(20), CT("b"))).toHaveLength(20);
    const seen: string[] = [];
    const iterator = parseMultipart(source(fields(21), []).stream, CT("b"));
    const err = await problem(
      (async () => {
        for await (const part of iterator) seen.push(await readText(part));
      })(),
    );
    expect(err).toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
      status: 413,
      message: "multipart body has more than 20 parts",
    });
    expect(seen).toHaveLength(20);
    expect(await problem(parseAll(fields(4), CT("b"), [], { maxParts: 3 }))).toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
    });
  });

  it("errors the current part's body with 400 when the body is truncated, at any point", async () => {
    const full = enc.encode('--b\r\nContent-Disposition: form-data; name="f"; filename="x"\r\n\r\n0123456789\r\n--b--');
    const bodyStart = full.indexOf(48); // "0"
    for (let end = bodyStart; end < full.length - 2; end++) {
      const iterator = parseMultipart(source(full.subarray(0, end), every(3, end)).stream, CT("b"));
      const { value: part } = await iterator.next();
      const err = await problem(readAll(part!.body));
      expect(err).toMatchObject({ code: "VALIDATION_FAILED", status: 400, message: "truncated multipart body" });
      expect(await problem(iterator.next())).toBe(err);
    }
  });

  it("rejects a body truncated in the preamble or the headers with 400", async () => {
    for (const body of ["", "preamble only", "--b", "--b\r\nContent-Disposition: form-data; name=a\r\n"]) {
      expect(await problem(parseAll(enc.encode(body), CT("b")))).toMatchObject({
        message: "truncated multipart body",
        status: 400,
      });
    }
  });

  it("propagates a source error to the part body and the iterator", async () => {
    const boom = new Error("connection reset");
    let sent = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(boom);
        sent = true;
        controller.enqueue(enc.encode('--b\r\nContent-Disposition: form-data; name="f"\r\n\r\npartial'));
      },
    });
    const iterator = parseMultipart(stream, CT("b"));
    const { value: part } = await iterator.next();
    await expect(readAll(part!.body)).rejects.toBe(boom);
    await expect(iterator.next()).rejects.toBe(boom);
  });
});

describe("readText", () => {
  const body = concat(
    '--b\r\nContent-Disposition: form-data; name="big"\r\n\r\n',
    "x".repeat(100),
    '\r\n--b\r\nContent-Disposition: form-data; name="bad"\r\n\r\n',
    new Uint8Array([0x61, 0xff]),
    '\r\n--b\r\nContent-Disposition: form-data; name="ok"\r\n\r\nfine\r\n--b--',
  );

  it("reads UTF-8, rejects overflow with 413 and invalid UTF-8 with 400, and the iteration continues", async () => {
    const results: unknown[] = [];
    for await (const part of parseMultipart(source(body, every(7, body.length)).stream, CT("b"))) {
      results.push(await readText(part, 99).catch((err: ProblemError) => [err.status, err.errors?.[0]?.pointer]));
    }
    expect(results).toEqual([[413, "/body/big"], [400, "/body/bad"], "fine"]);
  });

  it("accepts a field exactly at maxBytes", async () => {
    const iterator = parseMultipart(source(body, []).stream, CT("b"));
    expect(await readText((await iterator.next()).value!, 100)).toBe("x".repeat(100));
  });
});

describe("parseMultipart: consumer behaviour", () => {
  const threeParts = concat(
    '--b\r\nContent-Disposition: form-data; name="skipped"; filename="a.bin"\r\n\r\n',
    "s".repeat(10_000),
    '\r\n--b\r\nContent-Disposition: form-data; name="half"\r\n\r\n',
    "h".repeat(10_000),
    '\r\n--b\r\nContent-Disposition: form-data; name="last"\r\n\r\nend\r\n--b--\r\n',
  );

  it("skips unread, half-read and cancelled parts, erroring the abandoned body streams", async () => {
    for (const mode of ["untouched", "cancelled"] as const) {
      const iterator = parseMultipart(source(threeParts, every(100, threeParts.length)).stream, CT("b"));
      const first = (await iterator.next()).value!;
      if (mode === "cancelled") await first.body.cancel();
      const second = (await iterator.next()).value!;
      expect(second.name).toBe("half");
      if (mode === "untouched") await expect(readAll(first.body)).rejects.toThrow(/skipped/);
      const reader = second.body.getReader();
      expect((await reader.read()).value?.[0]).toBe(104); // "h"
      reader.releaseLock();
      const third = (await iterator.next()).value!;
      expect(third.name).toBe("last");
      expect(await readText(third)).toBe("end");
      expect((await iterator.next()).done).toBe(true);
    }
  });

  it("does not pull the source for a part until its body is read", async () => {
    const big = concat('--b\r\nContent-Disposition: form-data; name="f"\r\n\r\n', new Uint8Array(1 << 20), "\r\n--b--");
    const { stream, stats } = source(big, every(4096, big.length));
    const part = (await parseMultipart(stream, CT("b")).next()).value!;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stats.pulled).toBe(4096);
    const reader = part.body.getReader();
    await reader.read();
    await reader.read();
    expect(stats.pulled).toBeLessThanOrEqual(3 * 4096);
  });

  it("cancels the source when the iteration is abandoned, and errors the open body", async () => {
    const { stream, stats } = source(threeParts, every(100, threeParts.length));
    let open: MultipartPart | undefined;
    for await (const part of parseMultipart(stream, CT("b"))) {
      open = part;
      break;
    }
    expect(stats.cancelled).toBe(true);
    await expect(readAll(open!.body)).rejects.toThrow(/closed/);

    const early = source(threeParts, []);
    await parseMultipart(early.stream, CT("b")).return?.();
    expect(early.stats.cancelled).toBe(true);
  });

  it("consumes the source to its end after the close delimiter, ignoring the epilogue", async () => {
    const { stream, stats } = source(HAND_BUILT, every(5, HAND_BUILT.length));
    for await (const part of parseMultipart(stream, CT("XyZ-b0und4ry"))) await part.body.cancel();
    expect(stats.pulled).toBe(HAND_BUILT.length);
    expect(stats.cancelled).toBe(false);
    expect(stream.locked).toBe(false);
  });
});

describe("parseMultipart: a 64 MiB file", () => {
  it("streams through with a bounded read-ahead", async () => {
    const total = 64 * 1024 * 1024;
    const chunk = 64 * 1024;
    // Pseudo-random content seeded with delimiter near-misses.
    const block = new Uint8Array(chunk);
    for (let i = 0, x = 1; i < chunk; i++) block[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    block.set(enc.encode("\r\n--formdata-bound"), 1000);
    const straddling = enc.encode("\r\n--formdata-boundarY"); // split across every chunk border
    block.set(straddling.subarray(0, 10), chunk - 10);
    block.set(straddling.subarray(10), 0);
    const head = enc.encode(
      '--formdata-boundary\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n',
    );
    const tail = enc.encode("\r\n--formdata-boundary--\r\n");
    let produced = 0;
    let consumed = 0;
    let maxAhead = 0;
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (produced === 0) controller.enqueue(head);
          if (produced === total) return controller.close();
          produced += chunk;
          controller.enqueue(produced === total ? concat(block, tail) : block.slice());
        },
      },
      { highWaterMark: 0 },
    );

    const started = performance.now();
    let mismatch = -1;
    for await (const part of parseMultipart(stream, CT("formdata-boundary"))) {
      expect(part.filename).toBe("big.bin");
      for await (const data of part.body) {
        for (let i = 0; i < data.length; i += 97)
          if (data[i] !== block[(consumed + i) % chunk] && mismatch < 0) mismatch = consumed + i;
        if (data[data.length - 1] !== block[(consumed + data.length - 1) % chunk] && mismatch < 0) mismatch = consumed;
        consumed += data.length;
        maxAhead = Math.max(maxAhead, produced - consumed);
      }
    }
    const seconds = (performance.now() - started) / 1000;
    expect(mismatch).toBe(-1);
    expect(consumed).toBe(total);
    expect(maxAhead).toBeLessThanOrEqual(2 * chunk);
    console.info(
      `multipart: 64 MiB in ${seconds.toFixed(2)} s = ${(64 / seconds).toFixed(0)} MiB/s, max read-ahead ${maxAhead} bytes`,
    );
  });
});
