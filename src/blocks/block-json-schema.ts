import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';

// As the client tools' compiler (runs/client-tools.ts): nothing registered between compilations,
// so one tenant's `$id` can neither clash with nor be `$ref`'d by another's; not strict, since
// schemas written by hand carry keywords such as `examples`.
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false, addUsedSchema: false });

// A block's schema is compiled on every write that checks it: the last ones are kept, by their text.
const compiled = new Map<string, ValidateFunction>();
const KEPT = 256;

function compile(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) return known;
  const { $schema: _ignored, ...rest } = schema;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(rest);
  } finally {
    ajv.removeSchema(rest);
  }
  if (compiled.size >= KEPT) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, validate);
  return validate;
}

/** Why `schema` is not a usable JSON Schema, or undefined when it compiles. */
export function schemaProblem(schema: Record<string, unknown>): string | undefined {
  try {
    compile(schema);
    return undefined;
  } catch (error) {
    return `is not a valid JSON Schema: ${(error as Error).message}`;
  }
}

/** Where a value fails its block's schema: a JSON Pointer into the value ('' for the whole) and why. */
export interface SchemaMismatch {
  path: string;
  message: string;
}

/** The value's text read as JSON and checked against `schema`; undefined when it satisfies it. */
export function valueMismatch(schema: Record<string, unknown>, value: string): SchemaMismatch | undefined {
  let data: unknown;
  try {
    data = JSON.parse(value);
  } catch {
    return { path: '', message: 'is not JSON, and the block has a schema' };
  }
  return dataMismatch(schema, data);
}

export function dataMismatch(schema: Record<string, unknown>, data: unknown): SchemaMismatch | undefined {
  const validate = compile(schema);
  if (validate(data)) return undefined;
  const error = validate.errors?.[0];
  if (!error) return { path: '', message: 'does not satisfy the schema' };
  // `required` names the missing property in its params, not its path.
  const missing = error.keyword === 'required' ? `/${String((error.params as { missingProperty?: string }).missingProperty ?? '')}` : '';
  return { path: `${error.instancePath}${missing}`, message: error.message ?? 'does not satisfy the schema' };
}

/** A JSON merge patch (RFC 7396) applied to `target`: `null` removes a member, objects merge, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const base: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete base[key];
    // Defined, not assigned: a `__proto__` member is a member like any other.
    else Object.defineProperty(base, key, { value: mergePatch(base[key], value), enumerable: true, writable: true, configurable: true });
  }
  return base;
}
