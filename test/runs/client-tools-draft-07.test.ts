import { describe, expect, it } from 'vitest';
import { parametersProblem, toClientTools } from '../../src/runs/client-tools.js';

// As the AI SDK's zod-to-JSON-Schema sends a tool's parameters.
const draft07 = () => ({
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { query: { type: 'string', minLength: 1 }, topK: { type: 'integer', maximum: 20 } },
  required: ['query'],
  additionalProperties: false,
});

// Regression: every AI SDK tool was refused with "no schema with key or ref http://json-schema.org/draft-07/schema#".
describe('client tool schemas marked draft-07', () => {
  it('are accepted, and arguments are checked against them', () => {
    expect(parametersProblem(draft07())).toBeUndefined();
    const [tool] = toClientTools([{ type: 'function', function: { name: 'searchMemories', parameters: draft07() } }]);
    expect(tool!.validate!({ query: 'tea', topK: 3 })).toBeUndefined();
    expect(tool!.validate!({ topK: 3 })).toContain("must have required property 'query'");
    expect(tool!.validate!({ query: 'tea', extra: 1 })).toContain('must NOT have additional properties');
    // The declaration is advertised to the model as the client sent it.
    expect(tool!.parameters).toEqual(draft07());
  });

  it('still refuses a $schema that names no known draft', () => {
    expect(parametersProblem({ ...draft07(), $schema: 'https://example.com/my-meta#' })).toMatch(/not a valid JSON Schema/);
  });
});
