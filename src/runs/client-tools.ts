import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ClientTool } from '../llm/agent-loop.js';
import type { ClientToolDeclaration } from './run-types.js';

// One compiler for the process, holding nothing between compilations: schemas with an `$id` are
// not registered (`addUsedSchema`), so one tenant's cannot clash with or be `$ref`'d by another's,
// and each compiled schema leaves Ajv's cache at once (`compile`), which would otherwise keep every
// declaration ever sent. Draft 2020-12, what OpenAI's function parameters follow; not strict,
// since real-world tool schemas carry keywords such as `examples` that strict mode refuses.
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false, addUsedSchema: false });

// Generators such as the AI SDK's (zod to JSON Schema) mark their schemas as draft-07 (or 04, 06),
// a meta-schema Ajv2020 does not hold; the keywords tool parameters use read the same under 2020-12.
const OLDER_DRAFT = /^https?:\/\/json-schema\.org\/draft-0[467]\/schema#?$/;

function compile(declared: Record<string, unknown>) {
  const { $schema, ...rest } = declared;
  const schema = typeof $schema === 'string' && OLDER_DRAFT.test($schema) ? rest : declared;
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}

/** Why a declared tool's `parameters` cannot be used, or undefined when they can. */
export function parametersProblem(parameters: Record<string, unknown>): string | undefined {
  if (parameters.type !== 'object') return 'must be a JSON Schema of type "object"';
  try {
    compile(parameters);
    return undefined;
  } catch (error) {
    return `is not a valid JSON Schema: ${(error as Error).message}`;
  }
}

const EMPTY_PARAMETERS = { type: 'object', properties: {} };

/** The client's tools as the agent loop takes them: advertised, with their arguments checked against the declared schema. */
export function toClientTools(declarations: readonly ClientToolDeclaration[]): ClientTool[] {
  return declarations.map(({ function: fn, deferred }) => {
    const parameters = fn.parameters ?? EMPTY_PARAMETERS;
    const validate = compile(parameters);
    return {
      name: fn.name,
      description: fn.description ?? '',
      parameters,
      validate: (args: unknown) => (validate(args) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'arguments' })),
      ...(deferred ? { deferred: true } : {}),
    };
  });
}
