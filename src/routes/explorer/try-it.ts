/**
 * The served document as "Try it out" should see it. Swagger UI copies an optional parameter's
 * `example` into its input and builds a JSON body's starting value from every property's example,
 * so a user who fills only the required fields still sends fake signatures, preconditions, digests
 * and lock expiries (403, 412, 422). Here an optional parameter's example moves into its description
 * (still shown, never sent) and a JSON body starts from its required properties only.
 */
type Schema = {
  $ref?: string;
  type?: string | string[];
  example?: unknown;
  default?: unknown;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  allOf?: Schema[];
};
type Parameter = { required?: boolean; example?: unknown; description?: string; schema?: Schema };
type MediaType = { schema?: Schema; example?: unknown; examples?: unknown };
type Operation = { parameters?: Parameter[]; requestBody?: { content?: Record<string, MediaType> } };
type Document = { paths?: Record<string, Record<string, unknown>>; components?: { schemas?: Record<string, Schema> } };

const showExample = (description: string | undefined, example: unknown) =>
  `${description ? `${description}\n\n` : ""}Example: \`${typeof example === "string" ? example : JSON.stringify(example)}\``;

function withoutPrefill(param: Parameter): Parameter {
  if (param.required) return param;
  const example = param.example ?? param.schema?.example;
  if (example === undefined) return param;
  const { example: _, ...rest } = param;
  const { example: __, ...schema } = param.schema ?? {};
  return { ...rest, schema, description: showExample(param.description, example) };
}

/** A schema's properties and required names, through `$ref`s and `allOf`. */
function flatten(
  schema: Schema | undefined,
  doc: Document,
): { properties: Record<string, Schema>; required: string[] } {
  const resolved = schema?.$ref ? doc.components?.schemas?.[schema.$ref.split("/").at(-1) ?? ""] : schema;
  const parts = (resolved?.allOf ?? []).map((part) => flatten(part, doc));
  return {
    properties: Object.assign({}, ...parts.map((p) => p.properties), resolved?.properties),
    required: [...parts.flatMap((p) => p.required), ...(resolved?.required ?? [])],
  };
}

/** A JSON body's starting value: each required property's example (or default), nothing optional. */
function requiredSample(schema: Schema | undefined, doc: Document): Record<string, unknown> {
  const { properties, required } = flatten(schema, doc);
  return Object.fromEntries(
    required.map((name) => [name, properties[name]?.example ?? properties[name]?.default ?? ""]),
  );
}

function forTryIt(op: Operation, doc: Document): Operation {
  const json = op.requestBody?.content?.["application/json"];
  const parameters = op.parameters?.map(withoutPrefill);
  if (!json || json.example !== undefined || json.examples !== undefined) return { ...op, parameters };
  const content = {
    ...op.requestBody?.content,
    "application/json": { ...json, example: requiredSample(json.schema, doc) },
  };
  return { ...op, parameters, requestBody: { ...op.requestBody, content } };
}

// Path items also hold `parameters` (an array), `summary` and `description`: only operations change.
const isOperation = (value: unknown): value is Operation =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function withTryItDefaults<D extends object>(served: D): D {
  const doc = served as Document;
  const paths = Object.fromEntries(
    Object.entries(doc.paths ?? {}).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([key, value]) => [key, isOperation(value) ? forTryIt(value, doc) : value]),
      ),
    ]),
  );
  return { ...served, paths };
}
