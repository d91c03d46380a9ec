import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

type Json = Record<string, any>;

const COMPONENTS_ID = 'https://memrag.invalid/components.json';

/**
 * Compiles the JSON Schemas of an OpenAPI document with Ajv (draft 2020-12, strict), resolving
 * `#/components/schemas/...` references: tests then judge bodies by the document alone.
 */
export function documentValidator(document: Json) {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  // ajv-formats is CommonJS; its default export arrives wrapped or not depending on the loader.
  const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as unknown as (ajv: Ajv2020) => void;
  addFormats(ajv);
  const cache = new Map<unknown, ValidateFunction>();
  // Refs are rewritten to the `$defs` of one schema that holds every component: standard JSON
  // Schema, no OpenAPI knowledge. Added once, so that Ajv compiles each component once, not once
  // for every schema that copies them all (30 s of the document test on two cores).
  const rewritten = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`)) as Json;
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewritten(document.components?.schemas ?? {}) });

  function compile(schema: Json): ValidateFunction {
    const cached = cache.get(schema);
    if (cached) return cached;
    const validate = ajv.compile(rewritten(schema));
    cache.set(schema, validate);
    return validate;
  }

  function operation(method: string, path: string): Json {
    const op = document.paths?.[path]?.[method.toLowerCase()];
    if (!op) throw new Error(`${method} ${path} is not in the document`);
    return op;
  }

  return {
    compile,
    operation,
    requestBody(method: string, path: string, mediaType = 'application/json'): ValidateFunction {
      const schema = operation(method, path).requestBody?.content?.[mediaType]?.schema;
      if (!schema) throw new Error(`${method} ${path} has no ${mediaType} body in the document`);
      return compile(schema);
    },
    parameter(method: string, path: string, name: string): ValidateFunction {
      const parameter = (operation(method, path).parameters ?? []).find((p: Json) => p.name === name);
      if (!parameter) throw new Error(`${method} ${path} has no parameter ${name} in the document`);
      return compile(parameter.schema);
    },
    response(method: string, path: string, status: number, mediaType = 'application/json'): ValidateFunction {
      const schema = operation(method, path).responses?.[String(status)]?.content?.[mediaType]?.schema;
      if (!schema) throw new Error(`${method} ${path} has no ${status} ${mediaType} reply in the document`);
      return compile(schema);
    },
  };
}

export type DocumentValidator = ReturnType<typeof documentValidator>;
