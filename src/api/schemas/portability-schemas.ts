import { z } from 'zod';
import { agentSettingsSchema } from '../../agents/agent-config.js';
import { EXPORT_FORMAT, EXPORT_VERSION } from '../../portability/export-lines.js';
import { SYNC_IMPORT_MAX_RECORDS } from '../../portability/import-job.js';
import { agentIdSchema, contentSchema, keySchema, metadataSchema, notBlank, storableString, tagSchema, userIdSchema } from './memory-schemas.js';
import { importConversationBody } from './conversation-schemas.js';
import { DOCUMENT_LIMITS } from './document-schemas.js';
import { blockLineSchema } from './block-schemas.js';

/** The export and import routes' inputs and replies. */

const timestamp = z.iso.datetime({ offset: true });
const nullableTime = timestamp.nullable();
const storedTags = z.array(tagSchema).max(1_000);
const jsonObject = z.record(z.string(), z.unknown());
const origins = z.array(jsonObject).max(1_000);

export const exportQuery = z.strictObject({
  include: z.enum(['documents']).optional().meta({ description: "`documents`: the tenant's documents too, with their text." }),
  agentId: agentIdSchema.optional().meta({ description: "Only this agent's memories, conversations and agent settings." }),
  userId: userIdSchema.optional().meta({ description: "Only this user's memories and conversations (not the agent's shared memories)." }),
});

export const importQuery = z.strictObject({
  format: z.enum(['memrag', 'mem0']).default('memrag').meta({ description: '`memrag`: an NDJSON export of `GET /v1/export`; `mem0`: Mem0 memories as JSON.' }),
  atomic: z.enum(['true', 'false']).default('false').meta({ description: '`true`: nothing is imported when any line fails to read.' }),
  async: z
    .enum(['true', 'false'])
    .optional()
    .meta({
      description:
        '`true`: queue the import as a job and answer `202 {job}`; `false`: import within the request, whatever its size. ' +
        `Unset: a job past ${SYNC_IMPORT_MAX_RECORDS.toLocaleString('en-US')} records (lines after the header; Mem0: items).`,
    }),
  agentId: agentIdSchema.optional().meta({ description: 'Mem0 only: the agent of items without an `agent_id` (default `default`).' }),
  userId: userIdSchema.optional().meta({ description: 'Mem0 only: the user of items without a `user_id` (default: shared).' }),
});

export const exportHeaderSchema = z
  .strictObject({
    type: z.literal('header'),
    format: z.literal(EXPORT_FORMAT),
    version: z.literal(EXPORT_VERSION),
    exportedAt: timestamp,
    scope: z.strictObject({ agentId: agentIdSchema.optional(), userId: userIdSchema.optional(), include: z.array(z.enum(['documents'])).optional() }),
  })
  .meta({ id: 'ExportHeader', description: "The export's first line." });

const memoryEventSchema = z.strictObject({
  memoryId: z.uuid(),
  event: z.enum(['created', 'updated', 'invalidated', 'deleted', 'expired', 'approved']),
  content: z.string().nullable(),
  previousContent: z.string().nullable(),
  tags: storedTags,
  previousTags: storedTags.nullable(),
  metadata: jsonObject.nullable(),
  sources: origins.nullable(),
  validFrom: nullableTime,
  validUntil: nullableTime,
  expiresAt: nullableTime,
  status: z.enum(['active', 'quarantined']).nullable().default(null),
  quarantineReasons: z.array(z.string().max(256)).max(100).nullable().default(null),
  actor: jsonObject,
  at: timestamp,
});

export const memoryLineSchema = z
  .strictObject({
    type: z.literal('memory'),
    id: z.uuid(),
    agentId: agentIdSchema,
    userId: userIdSchema.nullable(),
    key: keySchema,
    content: contentSchema,
    tags: storedTags,
    metadata: metadataSchema.pipe(jsonObject),
    sources: origins,
    validFrom: nullableTime,
    validUntil: nullableTime,
    validTo: nullableTime,
    expiresAt: nullableTime,
    status: z.enum(['active', 'quarantined']).default('active'),
    quarantineReasons: z.array(z.string().max(256)).max(100).default([]),
    createdAt: timestamp,
    updatedAt: timestamp,
    history: z.array(memoryEventSchema).max(100_000),
  })
  .meta({ id: 'ExportedMemory', description: 'A memory with its history, oldest event first.' });

export const agentLineSchema = z
  .strictObject({
    type: z.literal('agent'),
    id: agentIdSchema,
    version: z.number().int().min(1),
    settings: agentSettingsSchema,
    createdAt: timestamp,
    updatedAt: timestamp,
    versions: z.array(z.strictObject({ version: z.number().int().min(1), settings: agentSettingsSchema, createdAt: timestamp })).max(100_000),
  })
  .meta({ id: 'ExportedAgent', description: 'An agent with every version of its settings.' });

export const documentLineSchema = z
  .strictObject({
    type: z.literal('document'),
    id: z.uuid(),
    title: storableString(1, DOCUMENT_LIMITS.titleMaxChars).refine(notBlank, 'must not be blank'),
    source: storableString(1, DOCUMENT_LIMITS.sourceMaxChars).nullable(),
    format: z.string().max(64),
    tags: storedTags,
    metadata: metadataSchema.pipe(jsonObject),
    text: storableString(1, DOCUMENT_LIMITS.textMaxChars).refine(notBlank, 'must not be blank'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'ExportedDocument', description: 'A document with its extracted text (`include=documents`); an import re-ingests the text.' });

const workflowDefinitionReply = z.record(z.string(), z.unknown()).meta({ description: 'A definition as `POST /v1/workflows` takes it (checked on import).' });

export const workflowLineSchema = z
  .strictObject({
    type: z.literal('workflow'),
    id: agentIdSchema,
    version: z.number().int().min(1),
    definition: workflowDefinitionReply,
    createdAt: timestamp,
    updatedAt: timestamp,
    versions: z.array(z.strictObject({ version: z.number().int().min(1), definition: workflowDefinitionReply, createdAt: timestamp })).max(100_000),
  })
  .meta({ id: 'ExportedWorkflow', description: 'A workflow with every version of its definition.' });

/** A conversation line is a conversation export (`importConversationBody`) with `type` for its format and version. */
export const conversationLineSchema = z
  .preprocess((value) => {
    if (typeof value !== 'object' || value === null) return value;
    const { type: _type, ...rest } = value as Record<string, unknown>;
    return { format: 'memrag.conversation', version: 1, ...rest };
  }, importConversationBody)
  .transform(({ format: _format, version: _version, ...rest }) => ({ type: 'conversation' as const, ...rest }));

/** For the OpenAPI document only: the lines after the header, by `type`. */
export const exportRecordDocSchema = z
  .union([
    memoryLineSchema,
    agentLineSchema,
    workflowLineSchema,
    documentLineSchema,
    blockLineSchema,
    z
      .object({ type: z.literal('conversation') })
      .passthrough()
      .meta({ description: 'A conversation as `GET /v1/conversations/{id}/export` writes it, `type` in place of `format` and `version`.' }),
  ])
  .meta({ id: 'ExportRecord' });

const count = z.number().int().min(0);

export const importReplySchema = z
  .object({
    imported: z.object({
      memories: count,
      conversations: count,
      agents: count,
      documents: count,
      historyEvents: count,
      blocks: count,
      workflows: count.optional().meta({ description: 'Present when the file carried workflows.' }),
    }),
    skipped: count.meta({ description: 'Records the tenant holds already (same memory scope and key, conversation id, agent id), left as they are.' }),
    errors: z
      .array(z.object({ line: z.number().int().min(1), message: z.string() }))
      .meta({ description: "Lines that were not imported (1-based; Mem0: the item's index), and why." }),
  })
  .meta({ id: 'ImportReport' });

const mem0Time = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`)), 'must be an ISO 8601 date-time')
  .transform((s) => new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`).toISOString());

/** One Mem0 memory, as Mem0's `get_all`/export writes it; fields this server has no use for are ignored. */
export const mem0ItemSchema = z.object({
  id: z.string().min(1).max(256),
  memory: contentSchema,
  hash: z.string().max(256).nullish(),
  metadata: metadataSchema.pipe(jsonObject).nullish(),
  categories: z.array(tagSchema).max(100).nullish(),
  created_at: mem0Time.nullish(),
  updated_at: mem0Time.nullish(),
  user_id: userIdSchema.nullish(),
  agent_id: agentIdSchema.nullish(),
});

/** Mem0's export: `{results: [...]}` or the plain array; each item is checked on its own. */
export const mem0BodySchema = z.union([z.object({ results: z.array(z.unknown()) }), z.array(z.unknown())]);
