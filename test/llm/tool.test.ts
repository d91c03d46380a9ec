import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, toolSpecOf } from '../../src/llm/tool.js';

const args = z.strictObject({ query: z.string().min(1).max(2000), topK: z.number().int().optional() });

describe('a tool definition', () => {
  it('advertises the schema without its size bounds, still checking them', () => {
    const tool = defineTool({ name: 'search', description: 'Search', parameters: args, execute: () => 'ok' });
    expect(tool.jsonSchema).toMatchObject({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
    expect(tool.jsonSchema).not.toHaveProperty('$schema');
    expect(JSON.stringify(tool.jsonSchema)).not.toMatch(/minLength|maxLength/);
    expect(args.safeParse({ query: '' }).success).toBe(false);
  });

  it('makes a schema once, the same for every tool built on it, and frozen so that no caller changes it for the others', () => {
    const first = defineTool({ name: 'a', description: 'A', parameters: args, execute: () => 'ok' });
    const second = toolSpecOf({ name: 'b', description: 'B', parameters: args });
    expect(second.parameters).toBe(first.jsonSchema);
    expect(Object.isFrozen(first.jsonSchema)).toBe(true);
    expect(() => {
      (first.jsonSchema.properties as Record<string, unknown>).extra = {};
    }).toThrow(TypeError);
  });

  it('still checks the name of each tool built on a schema made before', () => {
    defineTool({ name: 'ok_name', description: 'A', parameters: args, execute: () => 'ok' });
    expect(() => defineTool({ name: 'bad name', description: 'B', parameters: args, execute: () => 'ok' })).toThrow(/Invalid tool name 'bad name'/);
  });

  it('refuses parameters that are not an object, every time', () => {
    const scalar = z.string();
    for (let i = 0; i < 2; i++) expect(() => toolSpecOf({ name: 'scalar', description: 'S', parameters: scalar })).toThrow(/must be a zod object schema/);
  });
});
