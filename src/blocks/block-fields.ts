import { z } from 'zod';
import { storable } from '../text/storable-string.js';
import { schemaProblem, valueMismatch } from './block-json-schema.js';

/** Bounds on a block, shared by the routes, agents' templates and the model's tools. */
export const BLOCK_LIMITS = {
  /** Characters a block holds when it names no limit. */
  defaultLimit: 2_000,
  maxLimit: 20_000,
  descriptionMaxChars: 1_000,
  /** A JSON Schema serialised, at most: it is compiled on every write. */
  schemaMaxChars: 20_000,
  /** Templates per agent. */
  maxTemplates: 32,
  /** Blocks per scope: a turn carries up to three scopes' blocks in its prompt. */
  maxPerScope: 32,
  /** Events of a page of a block's history, unless asked for fewer, and at most. */
  historyPage: 100,
  historyPageMax: 1_000,
} as const;

export const BLOCK_LABEL = /^[a-z0-9_-]{1,64}$/;

export const blockLabelSchema = z
  .string()
  .regex(BLOCK_LABEL, 'must be 1 to 64 characters of a-z, 0-9, _ and -')
  .meta({ description: "The block's name in the prompt and in the tools: `[a-z0-9_-]{1,64}`." });

export const blockLimitSchema = z
  .number()
  .int()
  .min(1)
  .max(BLOCK_LIMITS.maxLimit)
  .meta({ description: `Characters the value may hold (default ${BLOCK_LIMITS.defaultLimit}, at most ${BLOCK_LIMITS.maxLimit}).` });

export const blockDescriptionSchema = storable(z.string().max(BLOCK_LIMITS.descriptionMaxChars)).meta({
  description: 'What the block is for, shown to the model beside it.',
});

/** A JSON Schema is an object (or a boolean); whether it compiles is checked where it is set. */
export const blockJsonSchemaSchema = z
  .record(z.string(), z.unknown())
  .refine((s) => JSON.stringify(s).length <= BLOCK_LIMITS.schemaMaxChars, `must be at most ${BLOCK_LIMITS.schemaMaxChars} characters as JSON`)
  .meta({ description: 'A JSON Schema (draft 2020-12) the value, read as JSON, must satisfy; `block_update_json` patches such a block.' });

/** An agent's block template (`blocks` of its settings). */
export const blockTemplateSchema = z
  .strictObject({
    label: blockLabelSchema,
    scope: z.enum(['agent', 'user']).meta({
      description: "`agent`: the agent's own block, seen by all its users; `user`: a block of its own for each user, made on the user's first turn.",
    }),
    value: storable(z.string().max(BLOCK_LIMITS.maxLimit)).optional(),
    description: blockDescriptionSchema.optional(),
    limit: blockLimitSchema.optional(),
    readOnly: z.boolean().optional(),
    schema: blockJsonSchemaSchema.optional(),
  })
  // Checked when the agent is saved: a template the block could not hold would fail on every turn.
  .superRefine((template, ctx) => {
    const value = template.value ?? '';
    const limit = template.limit ?? BLOCK_LIMITS.defaultLimit;
    if (value.length > limit) ctx.addIssue({ code: 'custom', path: ['value'], message: `is ${value.length} characters, over the limit of ${limit}` });
    if (!template.schema) return;
    const problem = schemaProblem(template.schema);
    if (problem) return void ctx.addIssue({ code: 'custom', path: ['schema'], message: problem });
    const mismatch = valueMismatch(template.schema, value);
    if (mismatch) ctx.addIssue({ code: 'custom', path: ['value', ...mismatch.path.split('/').slice(1)], message: mismatch.message });
  });

export type BlockTemplate = z.output<typeof blockTemplateSchema>;

export const blockTemplatesSchema = z
  .array(blockTemplateSchema)
  .max(BLOCK_LIMITS.maxTemplates)
  .refine((ts) => new Set(ts.map((t) => `${t.scope}:${t.label}`)).size === ts.length, 'two templates of one scope share a label')
  .meta({ description: 'Working-memory blocks the agent starts with; see `/v1/blocks`.' });
