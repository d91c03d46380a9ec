import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

const DEFS_PREFIX = '#/$defs/';
const COMPONENTS_PREFIX = '#/components/schemas/';

/**
 * Converts zod schemas to the JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) of an OpenAPI
 * document. Schemas with a `.meta({ id })` become shared `components.schemas` entries referenced
 * by `$ref`; everything else is inlined where it is used.
 */
export class JsonSchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};

  /**
   * `input`: what a client may send (defaults make fields optional, transforms show what they
   * read), the view of request bodies. `output`: the parsed value, which for query parameters
   * shows the number a `?limit=` string must hold rather than the string's pattern.
   */
  convert(schema: z.ZodType, io: 'input' | 'output' = 'input'): JsonSchema {
    // `unrepresentable` stays "throw": a schema the document cannot express must fail the build, not become `{}`.
    const converted = z.toJSONSchema(schema, { target: 'draft-2020-12', io, override: tidy }) as JsonSchema;
    const { $schema: _dialect, $defs, ...root } = converted;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) this.add(id, pointAtComponents(def));
    return pointAtComponents(root);
  }

  private add(id: string, schema: JsonSchema): void {
    const existing = this.schemas[id];
    // Two schemas under one id would make every $ref to it lie about one of them.
    if (existing && JSON.stringify(existing) !== JSON.stringify(schema)) {
      throw new Error(`Two different schemas are registered as ${JSON.stringify(id)}`);
    }
    this.schemas[id] = schema;
  }
}

/** zod writes its whole ISO 8601 regex next to `format: date-time`; the format says it, readably. */
function tidy({ jsonSchema }: { jsonSchema: JsonSchema }): void {
  if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
}

function pointAtComponents<T>(value: T): T {
  if (Array.isArray(value)) return value.map(pointAtComponents) as T;
  if (typeof value !== 'object' || value === null) return value;
  const out: JsonSchema = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] =
      key === '$ref' && typeof inner === 'string' && inner.startsWith(DEFS_PREFIX)
        ? COMPONENTS_PREFIX + inner.slice(DEFS_PREFIX.length)
        : pointAtComponents(inner);
  }
  return out as T;
}
