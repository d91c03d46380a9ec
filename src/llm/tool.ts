import { z } from 'zod';
import type { ToolSpec } from './messages.js';

export interface ToolContext {
  /** Aborted when the turn is aborted or the tool's timeout expires; long-running tools should honour it. */
  signal: AbortSignal;
  toolCallId: string;
}

export interface Tool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: S;
  /** Computed once at definition, so every request advertises the same schema. */
  jsonSchema: Record<string, unknown>;
  /** Non-string results are sent to the model as JSON. */
  execute(args: z.output<S>, ctx: ToolContext): unknown;
}

/** What the model is told of a tool: everything but how it runs. */
export interface ToolShape<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: S;
}

export interface ToolDefinition<S extends z.ZodType> extends ToolShape<S> {
  execute(args: z.output<S>, ctx: ToolContext): unknown;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): Tool<S> {
  return { ...definition, jsonSchema: jsonSchemaOf(definition) };
}

/** The spec a model is sent for a tool of this shape, without building the tool. */
export function toolSpecOf(shape: ToolShape): ToolSpec {
  return { name: shape.name, description: shape.description, parameters: jsonSchemaOf(shape) };
}

/**
 * Each zod schema's JSON schema, made once and frozen (shared by every tool built on it): a chat
 * builds its tools anew for every turn, and the conversion is not free.
 */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

function jsonSchemaOf(shape: ToolShape): Record<string, unknown> {
  // Providers reject other names with an opaque 400 on every request; fail at startup instead.
  if (!TOOL_NAME.test(shape.name)) throw new Error(`Invalid tool name '${shape.name}': use [a-zA-Z0-9_-], at most 64 chars`);
  const made = jsonSchemas.get(shape.parameters);
  if (made) return made;
  // `$schema` is noise to providers and some strict validators reject unknown top-level keys.
  const { $schema: _ignored, ...jsonSchema } = withoutSizeBounds(z.toJSONSchema(shape.parameters, { io: 'input' })) as Record<string, unknown>;
  if (jsonSchema.type !== 'object') throw new Error(`Tool '${shape.name}' parameters must be a zod object schema`);
  jsonSchemas.set(shape.parameters, deepFrozen(jsonSchema));
  return jsonSchema;
}

function deepFrozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFrozen(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Size bounds (string lengths, array sizes) are left out of what the model is sent: they are still
 * checked on the arguments, and a call past one goes back to the model as an error, but sent with
 * every request they cost tokens, a tenth of a small window for the built-in tools, for limits no
 * sensible call comes near.
 */
function withoutSizeBounds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutSizeBounds);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SIZE_BOUNDS.has(key)) continue;
    // Under `properties` the keys are argument names, which may be spelt like a bound.
    out[key] =
      key === 'properties' && typeof value === 'object' && value !== null
        ? Object.fromEntries(Object.entries(value).map(([name, property]) => [name, withoutSizeBounds(property)]))
        : withoutSizeBounds(value);
  }
  return out;
}

const SIZE_BOUNDS = new Set(['minLength', 'maxLength', 'minItems', 'maxItems']);

export function toToolSpec(tool: Tool): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: tool.jsonSchema };
}

export type ArgsValidation<T> = { ok: true; value: T } | { ok: false; error: string };

export function validateToolArgs<S extends z.ZodType>(tool: Tool<S>, args: unknown): ArgsValidation<z.output<S>> {
  const parsed = tool.parameters.safeParse(args);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, error: `Invalid arguments for tool '${tool.name}':\n${z.prettifyError(parsed.error)}` };
}
