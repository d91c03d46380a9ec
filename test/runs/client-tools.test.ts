import { describe, expect, it } from 'vitest';
import { parametersProblem, toClientTools } from '../../src/runs/client-tools.js';

const withId = () => ({ $id: 'urn:tenant-a:location', type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });

describe('client tool schemas', () => {
  it('checks arguments against the declared schema', () => {
    const [tool] = toClientTools([{ type: 'function', function: { name: 'f', parameters: withId() } }]);
    expect(tool!.validate!({ city: 'Oslo' })).toBeUndefined();
    expect(tool!.validate!({ city: 1 })).toContain('must be string');
    expect(tool!.validate!({})).toContain("must have required property 'city'");
  });

  it('compiles a schema with the same $id again (another request, a resumed run): nothing is kept between compilations', () => {
    expect(parametersProblem(withId())).toBeUndefined();
    expect(parametersProblem(withId())).toBeUndefined();
    expect(() => toClientTools([{ type: 'function', function: { name: 'f', parameters: withId() } }])).not.toThrow();
  });

  it("cannot $ref another declaration's schema by its $id", () => {
    expect(parametersProblem(withId())).toBeUndefined();
    expect(parametersProblem({ type: 'object', properties: { b: { $ref: 'urn:tenant-a:location' } } })).toMatch(/not a valid JSON Schema/);
  });

  it('refuses parameters that are not an object schema, or not a schema', () => {
    expect(parametersProblem({ type: 'string' })).toMatch(/type "object"/);
    expect(parametersProblem({ type: 'object', properties: { a: { type: 'nonsense' } } })).toMatch(/not a valid JSON Schema/);
  });
});
