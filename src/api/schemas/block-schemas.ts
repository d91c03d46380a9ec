import { z } from 'zod';
import { BLOCK_LIMITS, blockDescriptionSchema, blockJsonSchemaSchema, blockLabelSchema, blockLimitSchema } from '../../blocks/block-fields.js';
import { storable } from '../../text/storable-string.js';
import { agentIdSchema, userIdSchema } from './memory-schemas.js';

const scopeFields = {
  agentId: agentIdSchema.optional().meta({ description: "The agent's block (with `userId`: its own view of that user). Absent: no agent." }),
  userId: userIdSchema.optional().meta({ description: "The user's block (with `agentId`: that agent's view of the user). Absent: no user." }),
};

export const blockLabelParams = z.strictObject({ label: blockLabelSchema });

export const blockHistoryParams = z.strictObject({
  label: blockLabelSchema,
  eventId: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
});

/** Which block: by scope, and a moment to read it as of. */
export const blockScopeQuery = z.strictObject(scopeFields);

/** A page of a block's history: the newest `limit` events older than `before`. */
export const blockHistoryQuery = z.strictObject({
  ...scopeFields,
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(BLOCK_LIMITS.historyPageMax)
    .optional()
    .meta({ description: `Events in the page (default ${BLOCK_LIMITS.historyPage}, at most ${BLOCK_LIMITS.historyPageMax}).` }),
  before: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .meta({ description: "Only events older than this event id: the previous page's `nextBefore`." }),
});

export const getBlockQuery = z.strictObject({
  ...scopeFields,
  // A string here, made a Date by the route: a query's schema is documented as it is written.
  asOf: z.iso.datetime({ offset: true }).optional().meta({ description: 'The block as it was at this moment (ISO 8601), rebuilt from its history.' }),
});

export const putBlockBody = z
  .strictObject({
    ...scopeFields,
    value: storable(z.string().max(BLOCK_LIMITS.maxLimit)).meta({ description: 'At most `limit` characters; JSON satisfying `schema` when one is set.' }),
    description: blockDescriptionSchema.optional(),
    limit: blockLimitSchema.optional(),
    readOnly: z.boolean().optional().meta({ description: "The model's tools cannot change it (the API can)." }),
    schema: blockJsonSchemaSchema.optional(),
  })
  .meta({ id: 'PutBlockRequest' });

const scopeReply = { agentId: z.string().nullable(), userId: z.string().nullable() };

export const blockSchema = z
  .object({
    ...scopeReply,
    label: z.string(),
    value: z.string(),
    description: z.string().nullable(),
    limit: z.number().int(),
    readOnly: z.boolean(),
    schema: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Block' });

export const blockReplySchema = z.object({ block: blockSchema, created: z.boolean().optional() }).meta({ id: 'BlockReply' });

export const blockListSchema = z.object({ blocks: z.array(blockSchema) }).meta({ id: 'BlockList' });

const blockActorSchema = z
  .object({ type: z.enum(['api', 'model', 'template', 'import']) })
  .passthrough()
  .meta({
    description:
      '`api` (approving a held write: with `approves`, its event id, and its `userId`); `model` with `runId`, `conversationId`, ' +
      "`tool` and the turn's `userId` (a held write: and the tool's `arguments`); `template` with `agentVersion`; `import`.",
  });

export const blockEventSchema = z
  .object({
    id: z.number().int(),
    ...scopeReply,
    label: z.string(),
    event: z.enum(['written', 'deleted', 'quarantined', 'approved']),
    value: z.string().nullable(),
    description: z.string().nullable(),
    limit: z.number().int().nullable(),
    readOnly: z.boolean().nullable(),
    schema: z.record(z.string(), z.unknown()).nullable(),
    status: z.enum(['applied', 'quarantined', 'approved']).meta({
      description: '`quarantined`: a model write the memory firewall held, not applied; `approved`: held, then applied.',
    }),
    quarantineReasons: z.array(z.string()),
    actor: blockActorSchema,
    at: z.iso.datetime(),
  })
  .meta({ id: 'BlockEvent' });

export const blockHistorySchema = z
  .object({
    events: z.array(blockEventSchema).meta({ description: 'The newest events of the page, oldest first.' }),
    nextBefore: z.number().int().nullable().meta({ description: 'The `before` of the next (older) page; null when there is none.' }),
  })
  .meta({ id: 'BlockHistory' });

const lineTime = z.iso.datetime({ offset: true });

/** A block line of `GET /v1/export`: the block with its history, oldest event first. Strict, as the other lines. */
export const blockLineSchema = z
  .strictObject({
    type: z.literal('block'),
    agentId: agentIdSchema.nullable(),
    userId: userIdSchema.nullable(),
    label: blockLabelSchema,
    value: storable(z.string().max(BLOCK_LIMITS.maxLimit)),
    description: blockDescriptionSchema.nullable(),
    limit: blockLimitSchema,
    readOnly: z.boolean(),
    schema: blockJsonSchemaSchema.nullable(),
    createdAt: lineTime,
    updatedAt: lineTime,
    history: z
      .array(
        z.strictObject({
          event: z.enum(['written', 'deleted', 'quarantined', 'approved']),
          value: storable(z.string().max(BLOCK_LIMITS.maxLimit)).nullable(),
          description: blockDescriptionSchema.nullable(),
          limit: blockLimitSchema.nullable(),
          readOnly: z.boolean().nullable(),
          schema: blockJsonSchemaSchema.nullable(),
          status: z.enum(['applied', 'quarantined', 'approved']),
          quarantineReasons: z.array(z.string().max(200)).max(50),
          actor: z.object({ type: z.enum(['api', 'model', 'template', 'import']) }).passthrough(),
          at: lineTime,
        }),
      )
      .max(100_000),
  })
  .meta({ id: 'ExportedBlock', description: 'A working-memory block with its history, oldest event first.' });
