import { z } from 'zod';
import { QUARANTINE_REASONS } from '../../memory/quarantine-reasons.js';
import { timeWindowSchema } from './time-window-schema.js';

/** What the memory routes answer. Dates travel as ISO 8601 strings (JSON has no dates). */

const rankSchema = z.number().int().min(1).nullable();

export const memoryOriginSchema = z
  .object({
    actor: z.enum(['api', 'tool', 'extraction', 'system']).meta({ description: "Who wrote this wording: the API, the chat model's tool, or fact extraction." }),
    conversationId: z.string().nullable().meta({ description: 'The conversation whose turn wrote it; null for a write through the API.' }),
    turn: z.number().int().nullable(),
    quote: z
      .object({
        text: z.string(),
        start: z.number().int().min(0).meta({ description: "Offset of the quote in the user's message of that turn." }),
        end: z.number().int().min(0),
      })
      .nullable()
      .meta({ description: "The user's words the memory was drawn from (extraction); null otherwise or once its conversation was deleted." }),
    at: z.iso.datetime(),
    deleted: z.boolean().optional().meta({ description: 'True once the conversation it points to was deleted.' }),
  })
  .meta({ id: 'MemoryOrigin', description: 'Where a wording of the memory came from.' });

export const memorySchema = z
  .object({
    key: z.string(),
    content: z.string(),
    tags: z.array(z.string()).meta({ description: 'Trimmed and case-folded.' }),
    metadata: z.record(z.string(), z.unknown()),
    agentId: z.string(),
    userId: z.string().nullable().meta({ description: "The user it belongs to; null for the agent's shared memories." }),
    sources: z.array(memoryOriginSchema).meta({ description: 'Where it came from, oldest first: each new wording adds its origin.' }),
    validFrom: z.iso.datetime().nullable().meta({ description: 'Valid time: when the fact began to hold; null: always, as far as known.' }),
    validUntil: z.iso.datetime().nullable().meta({ description: 'Valid time: when the fact stopped holding; null: it still does.' }),
    validTo: z.iso.datetime().nullable().meta({ description: 'When it was invalidated (contradicted); null while valid.' }),
    expiresAt: z.iso.datetime().nullable().meta({ description: 'When it expires; null: never.' }),
    status: z.enum(['active', 'quarantined']).meta({
      description: '`quarantined`: the firewall read it as an instruction to an assistant; never recalled until approved (`POST /v1/memories/{key}/approve`).',
    }),
    quarantineReasons: z.array(z.enum(QUARANTINE_REASONS)).meta({
      description:
        'Why it was quarantined (override, standing_order, role_marker, exfiltration, hidden_text, similar_to_injection, second_opinion); empty while active.',
    }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Memory' });

export const saveMemoryReplySchema = z
  .object({
    memory: memorySchema,
    created: z.boolean().meta({ description: 'True for a new key (201), false for a replaced memory (200).' }),
    reembedded: z.boolean().meta({ description: 'False when the content was unchanged and its vector was kept.' }),
  })
  .meta({ id: 'SaveMemoryReply' });

export const memoryReplySchema = z.object({ memory: memorySchema }).meta({ id: 'MemoryReply' });

export const memoryPageSchema = z
  .object({
    items: z.array(memorySchema),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last one.' }),
  })
  .meta({ id: 'MemoryPage' });

export const memorySearchHitSchema = z
  .object({
    memory: memorySchema,
    score: z.number().meta({ description: 'Hybrid: the fused (weighted RRF) score. Vector: cosine similarity. Text: BM25.' }),
    ranks: z
      .object({ vector: rankSchema, text: rankSchema })
      .meta({ description: "1-based rank in each side's candidates; null where the memory was not among them." }),
  })
  .meta({ id: 'MemorySearchHit' });

export const memorySearchReplySchema = z.object({ hits: z.array(memorySearchHitSchema), timeWindow: timeWindowSchema }).meta({ id: 'MemorySearchReply' });

export const deleteByTagsReplySchema = z
  .object({ deleted: z.number().int().min(0).meta({ description: 'How many memories were deleted.' }) })
  .meta({ id: 'DeleteByTagsReply' });

export const tagCountsReplySchema = z.object({ tags: z.array(z.object({ tag: z.string(), count: z.number().int().min(1) })) }).meta({ id: 'TagCountsReply' });

export const batchMemoriesReplySchema = z.object({ results: z.array(saveMemoryReplySchema) }).meta({ id: 'BatchMemoriesReply' });

const actorSchema = z
  .object({
    type: z.enum(['api', 'tool', 'extraction', 'system']),
    conversationId: z.string().optional(),
    turn: z.number().int().optional(),
  })
  .meta({
    id: 'MemoryActor',
    description: "Who made the change: the API, the chat model's tool, fact extraction (with the turn it came from), or the server (expiry).",
  });

export const memoryHistoryReplySchema = z
  .object({
    events: z.array(
      z.object({
        event: z.enum(['created', 'updated', 'invalidated', 'deleted', 'expired', 'approved']),
        content: z.string().nullable().meta({ description: 'The content after the change; null once deleted or expired.' }),
        previousContent: z.string().nullable(),
        tags: z.array(z.string()),
        previousTags: z.array(z.string()).nullable(),
        validFrom: z.iso.datetime().nullable().meta({ description: 'Valid time as the change left it.' }),
        validUntil: z.iso.datetime().nullable(),
        sources: z.array(memoryOriginSchema).meta({ description: 'The origins as the change left them.' }),
        actor: actorSchema,
        at: z.iso.datetime(),
      }),
    ),
  })
  .meta({ id: 'MemoryHistoryReply' });
