// Suite 4 (issue 11 §4): property-based requests generated from the service's own /openapi.json
// against every endpoint of a real server on 127.0.0.1: paths, query, Range/If-* headers, JSON of
// right and wrong shapes, multipart uploads, other methods. Oracle: no 5xx (but an origin's own
// failure, 502/504 ORIGIN_*), no hang (per-request timeout), every error is problem+json, no
// unhandled error in the log. A few hundred cases in `npm test`, 10 000 under HARDENING=full.
import dns from "node:dns";
import net, { type Socket } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";
import {
  asText,
  hostileString,
  type KnownValues,
  type OpenApiDocument,
  type Schema,
  valueFor,
} from "./openapi-arbitraries.js";
import { report, scaled } from "./scale.js";

const CASES = scaled(400, 10_000);
const REQUEST_TIMEOUT_MS = 10_000;
const TENANT = "fuzz";
const AUTHOR = "Fuzz Author";

// ---------------------------------------------------------------------------------------------
// Network rule: this process talks to 127.0.0.1 only. No DNS at all (external URIs are generated
// from loopback addresses), and any connect to a non-loopback literal throws.
const realLookup = dns.lookup;
const realConnect = net.Socket.prototype.connect;
const refusedLookups: string[] = [];

function installNetworkGuard() {
  (dns as { lookup: unknown }).lookup = (hostname: string, _options: unknown, callback: (err: Error) => void) => {
    // An IP literal resolves to itself, without any query (server.listen asks for it).
    if (net.isIP(hostname) !== 0) return Reflect.apply(realLookup, dns, [hostname, _options, callback]);
    refusedLookups.push(hostname);
    const cb = typeof _options === "function" ? (_options as typeof callback) : callback;
    process.nextTick(() =>
      cb(Object.assign(new Error(`test network rule: no DNS (${hostname})`), { code: "ENOTFOUND" })),
    );
  };
  net.Socket.prototype.connect = function guarded(this: Socket, ...args: unknown[]) {
    const first = args[0] as { host?: string; path?: string } | number | undefined;
    const host =
      typeof first === "object" && first !== null ? first.host : typeof args[1] === "string" ? args[1] : undefined;
    if (host !== undefined && net.isIP(host) !== 0 && !(host.startsWith("127.") || host === "::1")) {
      throw new Error(`test network rule: connect to ${host}`);
    }
    return Reflect.apply(realConnect, this, args) as Socket;
  } as typeof realConnect;
}

function removeNetworkGuard() {
  (dns as { lookup: unknown }).lookup = realLookup;
  net.Socket.prototype.connect = realConnect;
}

// ---------------------------------------------------------------------------------------------

let app: TestApp;
let origin: Origin;
let doc: OpenApiDocument;
const known: KnownValues = {};

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  endpoint: string;
}

beforeAll(async () => {
  installNetworkGuard();
  origin = await startOrigin();
  origin.put("small.txt", "hello from the loopback origin");
  // A short fetch budget keeps a slow origin case from dominating the run.
  // CMS_PUBLIC_URL: createDataLink needs one to mint links (they are never followed here).
  app = await startTestApp({
    CMS_FETCH_TIMEOUT_MS: "3000",
    CMS_LOG_LEVEL: "info",
    CMS_PUBLIC_URL: "http://127.0.0.1:9",
  });
  doc = (await (await fetch(app.url("/openapi.json"))).json()) as OpenApiDocument;

  const created: { resourceUID: string; resourceURI: string }[] = [];
  for (const name of ["one.txt", "two.bin", "three.html"]) {
    const res = await fetch(
      app.url("/cms/v1.0/createResource"),
      json({
        resourceAuthor: AUTHOR,
        resourceBinary: Buffer.from(`content of ${name} `.repeat(20)).toString("base64"),
        resourceMediaType: "text/plain",
        resourceName: name,
        resourceTenantId: TENANT,
      }),
    );
    expect(res.status).toBe(201);
    created.push((await res.json()) as { resourceUID: string; resourceURI: string });
  }
  const lock = await fetch(
    app.url("/cms/v1.0/lockResourceDTO"),
    json({ resourceUID: created[0]?.resourceUID, author: AUTHOR }),
  );
  const { lockID } = (await lock.json()) as { lockID: string };

  const uids = fc.constantFrom(...created.map((c) => c.resourceUID));
  const port = Number(new URL(origin.url("/")).port);
  Object.assign(known, {
    resourceUID: uids,
    uid: uids,
    queryUID: uids,
    parentUID: uids,
    context: uids,
    resourceURI: fc.constantFrom(...created.map((c) => c.resourceURI)),
    path: fc.constantFrom("one.txt", "two.bin", "three.html"),
    lockID: fc.constantFrom(lockID),
    resourceTenantId: fc.constantFrom(TENANT),
    tenant: fc.constantFrom(TENANT),
    author: fc.constantFrom(AUTHOR),
    lockOwner: fc.constantFrom(AUTHOR),
    resourceAuthor: fc.constantFrom(AUTHOR),
    revision: fc.constantFrom("0", "1", "2", "-1", "99999999999999999999"),
    // Loopback only: no generated external URI ever names a host that needs DNS.
    resourceExternalURI: fc.constantFrom(
      origin.url("/bytes/small.txt"),
      origin.url("/gen/70000"),
      origin.url("/lying/5000"),
      origin.url("/status/404"),
      origin.url("/status/500"),
      origin.url("/redirect/2/small.txt"),
      origin.url("/redirect/9/small.txt"),
      `http://127.0.0.1:1/closed`,
      `http://[::1]:${port}/bytes/small.txt`,
      `http://0x7f.1:${port}/bytes/small.txt`,
      `http://user:pw@127.0.0.1:${port}/bytes/small.txt`,
      "ftp://127.0.0.1/file",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "not a url",
      "http://",
    ),
    // Webhook receivers: loopback too (a delivery to a name would need DNS).
    url: fc.constantFrom(
      origin.url("/status/200"),
      `http://127.0.0.1:1/closed`,
      `http://[::1]:${port}/hook`,
      "http://10.0.0.1/",
      "ftp://127.0.0.1/file",
      "not a url",
    ),
  } satisfies KnownValues);
});

afterAll(async () => {
  await app?.close();
  await origin?.close();
  removeNetworkGuard();
});

// ---------------------------------------------------------------------------------------------
// Request arbitraries.

const token = fc.stringMatching(/^[\x21-\x7e]{0,24}$/);
const etagLike = fc.oneof(
  fc.constant("*"),
  token.map((t) => `"${t}"`),
  token.map((t) => `W/"${t}"`),
  token,
);
const httpDate = fc.oneof(
  fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toUTCString()),
  token,
);
const rangeHeader = fc.oneof(
  fc.tuple(fc.nat(1000), fc.nat(1000)).map(([a, b]) => `bytes=${a}-${b}`),
  fc.nat(2000).map((n) => `bytes=-${n}`),
  fc.nat(2000).map((n) => `bytes=${n}-`),
  fc
    .array(fc.tuple(fc.nat(500), fc.nat(500)), { minLength: 2, maxLength: 5 })
    .map((rs) => `bytes=${rs.map(([a, b]) => `${a}-${b}`).join(",")}`),
  fc.constantFrom("bytes=", "bytes=0-0,-1", "items=0-1", "bytes=99999999999999999999-", "bytes=5-1"),
  token,
);

const headersArb = fc.record(
  {
    range: rangeHeader,
    "if-none-match": etagLike,
    "if-match": etagLike,
    "if-modified-since": httpDate,
    "if-unmodified-since": httpDate,
    "if-range": fc.oneof(etagLike, httpDate),
    accept: fc.constantFrom("*/*", "application/json", "text/html", "application/problem+json", "nonsense"),
    "x-request-id": token,
    origin: fc.constantFrom("http://127.0.0.1", "null", "https://example.org"),
    authorization: fc.constantFrom("Bearer x", "Bearer ", "Basic Zm9vOmJhcg=="),
  },
  { requiredKeys: [] },
);

/** encodeURIComponent that takes lone surrogates too (as U+FFFD, as a UTF-8 round trip would). */
const encode = (v: string) => encodeURIComponent(Buffer.from(v).toString());

const otherMethod = fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS");

/** A path parameter: a known value or a hostile one, percent-encoded or (sometimes) raw. */
const pathParam = (name: string) =>
  fc
    .tuple(
      fc.oneof({ arbitrary: known[name] ?? hostileString, weight: 3 }, { arbitrary: hostileString, weight: 1 }),
      fc.boolean(),
    )
    .map(([v, raw]) => (raw ? Buffer.from(v).toString().replaceAll("?", "%3F").replaceAll("#", "%23") : encode(v)));

function jsonBody(schema: Schema): fc.Arbitrary<{ body: string; contentType: string }> {
  return fc.oneof(
    {
      arbitrary: valueFor(doc, schema, known).map((v) => ({
        body: JSON.stringify(v) ?? "null",
        contentType: "application/json",
      })),
      weight: 12,
    },
    { arbitrary: fc.string({ maxLength: 60 }).map((body) => ({ body, contentType: "application/json" })), weight: 2 },
    {
      arbitrary: fc
        .jsonValue({ maxDepth: 3 })
        .map((v) => ({ body: JSON.stringify(v), contentType: "application/json" })),
      weight: 2,
    },
    {
      arbitrary: valueFor(doc, schema, known).map((v) => ({
        body: JSON.stringify(v) ?? "",
        contentType: "text/plain",
      })),
      weight: 1,
    },
    {
      arbitrary: fc.constant({ body: `{"queryUID":"${"x".repeat(70_000)}"}`, contentType: "application/json" }),
      weight: 1,
    },
  );
}

function multipartBody(schema: Schema): fc.Arbitrary<{ body: Uint8Array; contentType: string }> {
  const fieldNames = Object.keys(schema.properties ?? {}).filter((n) => n !== "file");
  const field = fc.tuple(
    fc.constantFrom(...fieldNames, "unknownField"),
    fc.oneof(
      fc.string({ maxLength: 20 }),
      ...fieldNames.map((n) => valueFor(doc, schema.properties?.[n] ?? {}, known, n).map(asText)),
    ),
  );
  return fc
    .record({
      fields: fc.array(field, { maxLength: 6 }),
      file: fc.option(
        fc.record({
          name: fc.oneof(fc.constant("f.bin"), fc.string({ maxLength: 20 })),
          bytes: fc.uint8Array({ maxLength: 2048 }),
          type: fc.constantFrom("application/octet-stream", "text/plain", "application/zip", ""),
        }),
      ),
      truncate: fc.option(fc.nat(400), { freq: 6 }),
      boundary: fc.constantFrom("fuzzBoundary", "x", ""),
      declared: fc.constantFrom("fuzzBoundary", "other"),
    })
    .map(({ fields, file, truncate, boundary, declared }) => {
      const parts: Buffer[] = [];
      for (const [name, value] of fields)
        parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
      if (file) {
        const type = file.type ? `Content-Type: ${file.type}\r\n` : "";
        parts.push(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name.replaceAll('"', "")}"\r\n${type}\r\n`,
          ),
          Buffer.from(file.bytes),
          Buffer.from("\r\n"),
        );
      }
      parts.push(Buffer.from(`--${boundary}--\r\n`));
      let body: Uint8Array = Buffer.concat(parts);
      if (truncate !== null) body = body.subarray(0, Math.min(truncate, body.length));
      return { body, contentType: `multipart/form-data; boundary=${declared === "other" ? "other" : boundary}` };
    });
}

/** Every operation of the document, plus paths it does not have. */
function endpointArbitraries(): fc.Arbitrary<FuzzRequest>[] {
  const out: fc.Arbitrary<FuzzRequest>[] = [];
  for (const [template, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
      const params = fc.tuple(...names.map(pathParam));
      const query = fc.tuple(
        ...(op.parameters ?? [])
          .filter((p) => p.in === "query")
          .map((p) =>
            fc.option(
              valueFor(doc, p.schema ?? {}, known, p.name).map((v) => `${encode(p.name)}=${encode(asText(v))}`),
              { freq: p.required ? 10 : 2 },
            ),
          ),
        fc.option(fc.constantFrom("expires=1", "signature=abc", "expires=99999999999&signature=", "a=%ZZ"), {
          freq: 4,
        }),
      );
      const content = op.requestBody?.content ?? {};
      const [contentType, media] = Object.entries(content)[0] ?? [];
      const body: fc.Arbitrary<{ body?: string | Uint8Array; contentType?: string }> = !media
        ? fc.constant({})
        : contentType === "multipart/form-data"
          ? multipartBody(media.schema)
          : contentType === "text/plain"
            ? fc
                .oneof(
                  known.resourceUID as fc.Arbitrary<string>,
                  hostileString,
                  (known.resourceUID as fc.Arbitrary<string>).map((u) => JSON.stringify(u)),
                )
                .map((b) => ({ body: b, contentType: "text/plain" }))
            : jsonBody(media.schema);
      const verb = method.toUpperCase();
      const methodArb = fc.oneof(
        { arbitrary: fc.constant(verb), weight: 8 },
        { arbitrary: verb === "GET" ? fc.constant("HEAD") : otherMethod, weight: 2 },
        { arbitrary: otherMethod, weight: 1 },
      );
      out.push(
        fc
          .record({ params, query, body, headers: headersArb, method: methodArb })
          .map(({ params, query, body, headers, method }) => {
            let i = 0;
            const path = template.replace(/\{\w+\}/g, () => params[i++] as string);
            const qs = query.filter((q) => q !== null).join("&");
            const hasBody = method !== "GET" && method !== "HEAD" && body.body !== undefined;
            return {
              method,
              path: qs ? `${path}?${qs}` : path,
              headers: { ...headers, ...(hasBody && body.contentType ? { "content-type": body.contentType } : {}) },
              body: hasBody ? body.body : undefined,
              endpoint: `${verb} ${template}`,
            };
          }),
      );
    }
  }
  out.push(
    fc
      .tuple(hostileString, otherMethod, headersArb)
      .map(([p, method, headers]) => ({ method, path: `/cms/v1.0/${encode(p)}`, headers, endpoint: "unknown path" })),
  );
  return out;
}

// ---------------------------------------------------------------------------------------------
// The oracle.

interface Outcome {
  status: number;
  violation: string | null;
  ms: number;
}

async function send(r: FuzzRequest): Promise<Outcome | null> {
  const started = performance.now();
  let res: Response;
  try {
    res = await fetch(app.url(r.path), {
      method: r.method,
      headers: r.headers,
      body: r.body as BodyInit | undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      redirect: "manual",
    });
  } catch (err) {
    if ((err as Error).name === "TimeoutError")
      return { status: 0, violation: `no answer within ${REQUEST_TIMEOUT_MS} ms`, ms: REQUEST_TIMEOUT_MS };
    // fetch() refused to send it (a header value it will not encode): not a case.
    if ((err as Error).name === "TypeError" && !(err as { cause?: unknown }).cause) return null;
    return {
      status: 0,
      violation: `connection failed: ${(err as Error).message} ${String((err as { cause?: unknown }).cause ?? "")}`,
      ms: performance.now() - started,
    };
  }
  let text = "";
  try {
    text = await res.text();
  } catch (err) {
    return {
      status: res.status,
      violation: `body failed mid-way: ${(err as Error).message}`,
      ms: performance.now() - started,
    };
  }
  const ms = performance.now() - started;
  const type = res.headers.get("content-type") ?? "";
  if (res.status >= 500) {
    const code =
      type.startsWith("application/problem+json") && r.method !== "HEAD"
        ? (JSON.parse(text) as { code?: string }).code
        : undefined;
    // The origin's own failure is reported as 502/504 ORIGIN_*: that is the honest answer, not a bug.
    const originFault =
      (res.status === 502 || res.status === 504) && (code === "ORIGIN_FAILED" || code === "ORIGIN_TIMEOUT");
    if (!originFault) return { status: res.status, violation: `${res.status} ${text.slice(0, 300)}`, ms };
  }
  if (res.status >= 400) {
    if (!type.startsWith("application/problem+json"))
      return { status: res.status, violation: `error without problem+json (${type}): ${text.slice(0, 200)}`, ms };
    if (r.method !== "HEAD") {
      let doc: { status?: number; code?: string };
      try {
        doc = JSON.parse(text);
      } catch {
        return { status: res.status, violation: `problem body is not JSON: ${text.slice(0, 200)}`, ms };
      }
      if (doc.status !== res.status || typeof doc.code !== "string")
        return { status: res.status, violation: `problem document does not match: ${text.slice(0, 200)}`, ms };
    }
  }
  return { status: res.status, violation: null, ms };
}

describe("fuzzing every endpoint from /openapi.json", () => {
  it(`${CASES} generated requests: no 5xx, no hang, every error problem+json`, async () => {
    const endpoints = endpointArbitraries();
    // Every operation in the document gets requests: one arbitrary per operation, picked evenly.
    expect(endpoints.length).toBeGreaterThanOrEqual(
      Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0),
    );
    const request = fc.oneof(...endpoints);
    const violations: { request: FuzzRequest; outcome: Outcome }[] = [];
    const byClass: Record<string, number> = {};
    const seen = new Set<string>();
    const latencies: number[] = [];
    let skipped = 0;
    const started = performance.now();
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    const result = await fc.check(
      fc.asyncProperty(request, async (r) => {
        const outcome = await send(r);
        if (outcome === null) {
          skipped++;
          return true;
        }
        seen.add(r.endpoint);
        latencies.push(outcome.ms);
        const cls =
          outcome.status === 0
            ? "none"
            : outcome.status >= 500 && !outcome.violation
              ? "origin_5xx"
              : `${Math.floor(outcome.status / 100)}xx`;
        byClass[cls] = (byClass[cls] ?? 0) + 1;
        if (outcome.violation)
          violations.push({
            request: {
              ...r,
              body: typeof r.body === "string" ? r.body.slice(0, 300) : r.body ? `<${r.body.length} bytes>` : undefined,
            },
            outcome,
          });
        return outcome.violation === null;
      }),
      { numRuns: CASES, seed, endOnFailure: true },
    );
    latencies.sort((a, b) => a - b);
    const seconds = (performance.now() - started) / 1000;
    report("fuzz", {
      cases: latencies.length,
      skipped,
      endpoints: seen.size,
      violations: violations.length,
      "2xx": byClass["2xx"] ?? 0,
      "3xx": byClass["3xx"] ?? 0,
      "4xx": byClass["4xx"] ?? 0,
      "5xx": byClass["5xx"] ?? 0,
      origin_5xx: byClass.origin_5xx ?? 0,
      p50_ms: (latencies[Math.floor(latencies.length * 0.5)] ?? 0).toFixed(1),
      p99_ms: (latencies[Math.floor(latencies.length * 0.99)] ?? 0).toFixed(1),
      max_ms: (latencies.at(-1) ?? 0).toFixed(1),
      dns_refused: refusedLookups.length,
      dns_names: JSON.stringify(refusedLookups.slice(0, 5)),
      seconds: seconds.toFixed(1),
      seed,
    });
    expect(violations.slice(0, 3), `counterexample: ${JSON.stringify(result.counterexample)}`).toEqual([]);
    expect(result.failed).toBe(false);
    expect(app.unhandledErrors()).toEqual([]);
    // Generated external URIs are loopback only: nothing needed a name resolved.
    expect(refusedLookups).toEqual([]);
  }, 1_800_000);
});
