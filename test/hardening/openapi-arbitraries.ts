/**
 * fast-check arbitraries built from the service's own OpenAPI document: values that satisfy each
 * schema, values that break it (wrong types, missing or extra fields, odd Unicode, huge strings),
 * and values the service knows (real UIDs, URIs, lock ids) so requests get past validation too.
 */
import fc from "fast-check";

// JSON Schema as zod-openapi emits it (OpenAPI 3.1): only the keywords the document uses.
export interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
  example?: unknown;
}

export interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { in: string; name: string; required?: boolean; schema?: Schema }[];
        requestBody?: { content: Record<string, { schema: Schema }> };
      }
    >
  >;
  components?: { schemas?: Record<string, Schema> };
}

/** Field name → values the running service knows (UIDs, URIs, lock ids, tenants, origin URLs). */
export type KnownValues = Record<string, fc.Arbitrary<string>>;

/** Strings that tend to break parsers: traversal, escapes, control and non-BMP characters, huge ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "..",
    "../../etc/passwd",
    "%2e%2e%2f",
    "%00",
    "%ZZ",
    "a\\b",
    "null",
    "0",
    "-1",
    "1e309",
    "\u0000",
    "\ud800",
    "💥",
    "<script>",
    "' or 1=1 --",
  ),
  fc.integer({ min: 300, max: 5000 }).map((n) => "x".repeat(n)),
);

export function resolveRef(doc: OpenApiDocument, schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.split("/").pop() as string;
  return resolveRef(doc, doc.components?.schemas?.[name] ?? {});
}

/** allOf flattened into one object schema (the document only uses allOf for objects). */
function flatten(doc: OpenApiDocument, schema: Schema): Schema {
  const s = resolveRef(doc, schema);
  if (!s.allOf) return s;
  const parts = s.allOf.map((p) => flatten(doc, p));
  return {
    type: "object",
    properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
    required: parts.flatMap((p) => p.required ?? []),
  };
}

function validString(s: Schema): fc.Arbitrary<string> {
  if (s.format === "date-time")
    return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format === "byte") return fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString("base64"));
  const options: fc.Arbitrary<string>[] = [
    fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 30, 30) }),
  ];
  if (typeof s.example === "string") options.push(fc.constant(s.example));
  if (s.pattern) {
    try {
      options.push(fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? Infinity)));
    } catch {
      // A pattern fast-check cannot generate from: the example and plain strings still cover it.
    }
  }
  return fc.oneof(...options);
}

/**
 * A generated value as a query parameter or form field carries it: objects and arrays as JSON,
 * everything else as String() would. Objects fast-check makes may have a null prototype, which
 * String() cannot convert.
 */
export function asText(value: unknown): string {
  return typeof value === "object" && value !== null ? JSON.stringify(value) : String(value);
}

/** A value for `schema`: mostly valid, sometimes the wrong type or hostile; `name` picks known values. */
export function valueFor(doc: OpenApiDocument, schema: Schema, known: KnownValues, name = ""): fc.Arbitrary<unknown> {
  const s = flatten(doc, schema);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  // A URI makes the service connect somewhere: strings for it come only from `known` (loopback),
  // never from the schema's example (a public host) or random text that may parse as a URL.
  const isUri = s.format === "uri";
  const notString = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.object({ maxDepth: 1 }),
  );
  const wrong = isUri ? notString : fc.oneof(notString, hostileString);
  let valid: fc.Arbitrary<unknown>;
  if (isUri) valid = known[name] ?? fc.constant("not a url");
  else if (s.enum) valid = fc.constantFrom(...s.enum);
  else if (types.includes("object") || s.properties) valid = objectFor(doc, s, known);
  else if (types.includes("array")) valid = fc.array(valueFor(doc, s.items ?? {}, known), { maxLength: 4 });
  else if (types.includes("integer")) valid = fc.integer({ min: s.minimum ?? -10, max: s.maximum ?? 1_000_000 });
  else if (types.includes("number")) valid = fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
  else if (types.includes("boolean")) valid = fc.boolean();
  else if (types.includes("string")) valid = validString(s);
  else valid = fc.jsonValue({ maxDepth: 2 });
  const choices: fc.Arbitrary<unknown>[] = [valid];
  const knownValue = known[name];
  if (knownValue) choices.push(knownValue, knownValue);
  if (types.includes("null")) choices.push(fc.constant(null));
  return fc.oneof({ arbitrary: fc.oneof(...choices), weight: 8 }, { arbitrary: wrong, weight: 2 });
}

/** An object: required fields usually present, optional ones sometimes, now and then an unknown one. */
function objectFor(doc: OpenApiDocument, s: Schema, known: KnownValues): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries(s.properties ?? {});
  const required = new Set(s.required ?? []);
  const fields = props.map(([key, prop]) =>
    fc.tuple(fc.constant(key), valueFor(doc, prop, known, key), fc.integer({ min: 0, max: 9 })),
  );
  return fc
    .tuple(
      fc.tuple(...fields),
      fc.option(fc.tuple(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 1 })), { freq: 5 }),
    )
    .map(([entries, extra]) => {
      const out: Record<string, unknown> = {};
      for (const [key, value, dice] of entries) {
        // Required: present 9 times in 10; optional: half the time.
        if (required.has(key) ? dice > 0 : dice < 5) out[key] = value;
      }
      if (extra) out[extra[0]] = extra[1];
      return out;
    });
}
