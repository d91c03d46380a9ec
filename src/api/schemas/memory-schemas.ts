import { z } from 'zod';
import { SEARCH_MODES } from '../../retrieval/search-mode.js';
import { MEMORY_FIELD_LIMITS, contentSchema, keySchema } from '../../memory/memory-fields.js';
import { normalizeTags, tagsSchema } from '../../retrieval/tags.js';
import { LONE_SURROGATE, NUL_MESSAGE, SURROGATE_MESSAGE, notBlank, storableString } from '../../text/storable-string.js';
import { asOfSchema } from './as-of-schema.js';
import { fusionWeightsSchema } from './fusion-weights-schema.js';
import { metadataFilterQuerySchema, metadataFilterSchema } from './metadata-filter-schema.js';
import { readMomentQueryFields, validAtSchema, validTimeFields, validTimeInOrder } from './valid-time-schema.js';

// The field schemas the chat's tools share with these routes live with the memories.
export { contentSchema, keySchema } from '../../memory/memory-fields.js';
export { tagSchema, tagsSchema } from '../../retrieval/tags.js';
export { notBlank, storableString } from '../../text/storable-string.js';

/** Every input limit of the memory routes, in one place. */
export const MEMORY_LIMITS = {
  ...MEMORY_FIELD_LIMITS,
  queryMaxChars: 100_000,
  metadataMaxBytes: 64 * 1024,
  // Deeper JSON overflows the stack while it is serialised for jsonb (a 500, not a 400).
  metadataMaxDepth: 32,
  agentIdMaxChars: 128,
  pageDefault: 50,
  pageMax: 200,
  cursorMaxChars: 512,
  topKDefault: 10,
  /** Ten years: longer is "forever", which is no TTL at all. */
  ttlMaxSeconds: 10 * 365 * 24 * 3600,
  batchMax: 100,
} as const;

/** Query parameters that carry tag lists (repeated and/or comma-separated). */
export const TAG_LIST_PARAMS = ['tagsAny', 'tagsAll', 'tagsNone'] as const;

export const agentIdSchema = z
  .string()
  .min(1)
  .max(MEMORY_LIMITS.agentIdMaxChars)
  .regex(/^[\w.:@-]+$/, 'may contain only letters, digits, "_", ".", ":", "@" and "-"');

/**
 * A JSON object, checked as it will be stored. Not `z.record`: it rebuilds the object by
 * assignment, which silently drops a `__proto__` key.
 */
export const metadataSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
      return;
    }
    const problem = findMetadataProblem(value, [], 1);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path });
      return;
    }
    const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
    if (bytes > MEMORY_LIMITS.metadataMaxBytes) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${MEMORY_LIMITS.metadataMaxBytes} bytes as JSON (got ${bytes})` });
    }
  })
  .transform((value) => value as Record<string, unknown>)
  // The checks above are code; without this, the OpenAPI document would show `{}` (anything).
  .meta({
    type: 'object',
    description: `A JSON object, at most ${MEMORY_LIMITS.metadataMaxBytes} bytes as JSON and ${MEMORY_LIMITS.metadataMaxDepth} levels deep.`,
  });

// The first unstorable value only: a hostile body could otherwise produce thousands of issues.
function findMetadataProblem(value: unknown, path: (string | number)[], depth: number): { path: (string | number)[]; message: string } | null {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) return { path, message: NUL_MESSAGE };
    if (LONE_SURROGATE.test(value)) return { path, message: SURROGATE_MESSAGE };
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  if (depth > MEMORY_LIMITS.metadataMaxDepth) {
    return { path, message: `must not nest deeper than ${MEMORY_LIMITS.metadataMaxDepth} levels` };
  }
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of entries) {
    if (typeof k === 'string') {
      if (k.includes('\u0000')) return { path: [...path, k], message: `key ${NUL_MESSAGE}` };
      if (LONE_SURROGATE.test(k)) return { path: [...path, k], message: `key ${SURROGATE_MESSAGE}` };
    }
    const found = findMetadataProblem(v, [...path, k], depth + 1);
    if (found) return found;
  }
  return null;
}

/** A user within the agent: same spelling rules as an agent id. Absent: the agent's shared memories. */
export const userIdSchema = agentIdSchema;

const ttlSecondsSchema = z.number().int().min(1).max(MEMORY_LIMITS.ttlMaxSeconds).meta({ description: 'Seconds from now until the memory expires.' });
const expiresAtSchema = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .meta({ type: 'string', format: 'date-time', description: 'When the memory expires (ISO 8601); a time already past is refused.' });
const futureExpiry = (body: { expiresAt?: Date | null; ttlSeconds?: number | null }, ctx: z.RefinementCtx) => {
  if (body.expiresAt != null && body.ttlSeconds != null)
    ctx.addIssue({ code: 'custom', path: ['ttlSeconds'], message: 'give ttlSeconds or expiresAt, not both' });
  if (body.expiresAt != null && body.expiresAt.getTime() <= Date.now()) ctx.addIssue({ code: 'custom', path: ['expiresAt'], message: 'must be in the future' });
};

/** `true`/`false` from a query string. */
const queryBoolean = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .pipe(z.boolean());

const searchQuerySchema = storableString(1, MEMORY_LIMITS.queryMaxChars).refine(notBlank, 'must not be blank');

/** A whole number from a query-string parameter. */
export const queryInt = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min).max(max));

const tagFilterFields = {
  agentId: agentIdSchema.optional(),
  userId: userIdSchema.optional().meta({
    description: "Only this user's memories (with `includeShared`, the agent's shared ones too). Absent: every user's memories and the shared ones.",
  }),
  tagsAny: tagsSchema.optional(),
  tagsAll: tagsSchema.optional(),
  tagsNone: tagsSchema.optional(),
};

/** Filters of searches and listings beyond tags (JSON bodies). */
const scopeFilterFields = {
  includeShared: z.boolean().optional().meta({ description: "With `userId`: the agent's shared memories too (as a chat turn recalls)." }),
  includeInvalid: z.boolean().optional().meta({ description: 'Invalidated (contradicted) memories too.' }),
  includeQuarantined: z.boolean().optional().meta({ description: 'Memories the firewall quarantined too (for review; never recalled by a chat).' }),
  metadata: metadataFilterSchema.optional(),
};

// Strict objects throughout: a misspelt field is a 400 instead of a silently ignored filter.

const memoryFields = {
  content: contentSchema,
  tags: tagsSchema.optional(),
  metadata: metadataSchema.optional(),
  agentId: agentIdSchema.optional(),
  userId: userIdSchema.optional().meta({ description: "The user whose memory it is. Absent: the agent's shared memory, recalled in every user's chats." }),
  ttlSeconds: ttlSecondsSchema.optional(),
  expiresAt: expiresAtSchema.optional(),
  ...validTimeFields,
};

const saveChecks = (body: { expiresAt?: Date | null; ttlSeconds?: number | null; validFrom?: Date | null; validUntil?: Date | null }, ctx: z.RefinementCtx) => {
  futureExpiry(body, ctx);
  validTimeInOrder(body, ctx);
};

export const saveMemoryBody = z.strictObject({ key: keySchema.optional(), ...memoryFields }).superRefine(saveChecks);

export const putMemoryBody = z.strictObject(memoryFields).superRefine(saveChecks);

export const batchMemoriesBody = z.strictObject({
  memories: z
    .array(z.strictObject({ key: keySchema.optional(), ...memoryFields }).superRefine(saveChecks))
    .min(1)
    .max(MEMORY_LIMITS.batchMax),
});

/** Only the fields given change; `tags` replaces, `addTags`/`removeTags` edit. */
export const patchMemoryBody = z
  .strictObject({
    content: contentSchema.optional(),
    tags: tagsSchema.optional(),
    addTags: tagsSchema.optional(),
    removeTags: tagsSchema.optional(),
    metadata: metadataSchema.optional(),
    ttlSeconds: ttlSecondsSchema.nullable().optional().meta({ description: 'Seconds from now until it expires; null: never.' }),
    expiresAt: expiresAtSchema.nullable().optional(),
    ...validTimeFields,
  })
  .superRefine((body, ctx) => {
    if (Object.values(body).every((v) => v === undefined)) ctx.addIssue({ code: 'custom', path: [], message: 'name at least one field to change' });
    if (body.tags !== undefined && (body.addTags !== undefined || body.removeTags !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['tags'], message: 'give tags (a replacement) or addTags/removeTags, not both' });
    }
    saveChecks(body, ctx);
  });

export const keyParams = z.strictObject({ key: keySchema });

/** `?agentId=&userId=`: routes addressing one memory, and body routes (which also take them in the body). */
export const agentIdQuery = z.strictObject({
  agentId: agentIdSchema.optional(),
  userId: userIdSchema.optional().meta({
    description: "The user whose memory it is. Absent: the agent's shared memory of the key, never a user's (a search without it spans every user's).",
  }),
});

/** Reading one memory: its scope, and the moment (record and valid time) it is read at. */
export const getMemoryQuery = z.strictObject({ ...agentIdQuery.shape, ...readMomentQueryFields });

export function searchMemoriesBody(maxTopK: number) {
  return (
    z
      .strictObject({
        query: searchQuerySchema,
        topK: z.number().int().min(1).max(maxTopK).default(MEMORY_LIMITS.topKDefault),
        mode: z.enum(SEARCH_MODES).default('hybrid'),
        /** A cosine-similarity threshold on the vector side; meaningless in text mode. */
        minScore: z.number().min(-1).max(1).optional(),
        weights: fusionWeightsSchema.optional(),
        asOf: asOfSchema.optional(),
        validAt: validAtSchema.optional(),
        ...tagFilterFields,
        ...scopeFilterFields,
      })
      // Refused rather than ignored: a client sending it expects a filter that text mode cannot apply.
      .superRefine((body, ctx) => {
        if (body.mode === 'text' && body.minScore !== undefined) {
          ctx.addIssue({ code: 'custom', path: ['minScore'], message: 'is a cosine similarity; text mode has none (use hybrid or vector)' });
        }
      })
  );
}

export const listMemoriesQuery = z.strictObject({
  ...tagFilterFields,
  includeShared: queryBoolean.optional(),
  includeInvalid: queryBoolean.optional(),
  includeQuarantined: queryBoolean.optional().meta({ description: 'Memories the firewall quarantined too.' }),
  status: z.enum(['active', 'quarantined']).optional().meta({ description: 'Only memories of this status: `quarantined` is the review queue.' }),
  metadata: metadataFilterQuerySchema.optional(),
  ...readMomentQueryFields,
  limit: queryInt(1, MEMORY_LIMITS.pageMax).default(MEMORY_LIMITS.pageDefault),
  cursor: z.string().max(MEMORY_LIMITS.cursorMaxChars).optional(),
});

export const tagCountsQuery = z.strictObject({ ...tagFilterFields, includeShared: queryBoolean.optional() });

/** Body or query of a bulk delete; a filter of excluded tags alone would delete almost everything. */
export const deleteByTagsInput = z.strictObject(tagFilterFields).refine((f) => normalizeTags(f.tagsAny).length + normalizeTags(f.tagsAll).length > 0, {
  path: ['tagsAny'],
  message: 'tagsAny or tagsAll must name at least one tag',
});
