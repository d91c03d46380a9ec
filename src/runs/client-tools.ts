import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ClientTool } from '../agent/agent-loop.js';
import type { ClientToolDeclaration } from './run-types.js';

// One compiler for the process: schemas are compiled per declaration, and Ajv caches by schema.
// Draft 2020-12 (what OpenAI's function parameters follow); not strict, since real-world tool
// schemas carry keywords such as `examples` or vendor extensions that strict mode refuses.
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });

/** Why a declared tool's `parameters` cannot be used, or undefined when they can. */
export function parametersProblem(parameters: Record<string, unknown>): string | undefined {
  if (parameters.type !== 'object') return 'must be a JSON Schema of type "object"';
  try {
    ajv.compile(parameters);
    return undefined;
  } catch (error) {
    return `is not a valid JSON Schema: ${(error as Error).message}`;
  }
}

const EMPTY_PARAMETERS = { type: 'object', properties: {} };

/** The client's tools as the agent loop takes them: advertised, with their arguments checked against the declared schema. */
export function toClientTools(declarations: readonly ClientToolDeclaration[]): ClientTool[] {
  return declarations.map(({ function: fn }) => {
    const parameters = fn.parameters ?? EMPTY_PARAMETERS;
    const validate = ajv.compile(parameters);
    return {
      name: fn.name,
      description: fn.description ?? '',
      parameters,
      validate: (args: unknown) => (validate(args) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'arguments' })),
    };
  });
}
