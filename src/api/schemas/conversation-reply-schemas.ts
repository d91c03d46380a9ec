import { z } from 'zod';

/** What the conversation routes answer. The export is described by the import's own body schema. */

const position = z.number().int().min(1);
const source = z.enum(['llm', 'rules']).meta({ description: 'Who wrote it: the LLM, or the rule-based fallback.' });

export const conversationSchema = z
  .object({
    id: z.uuid(),
    agentId: z.string(),
    userId: z.string().nullable().meta({ description: 'The user the conversation is with, fixed by its first turn; null when none was named.' }),
    title: z.string(),
    turnCount: z.number().int().min(0),
    messageCount: z.number().int().min(0),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Conversation' });

export const conversationPageSchema = z.object({ items: z.array(conversationSchema), nextCursor: z.string().nullable() }).meta({ id: 'ConversationPage' });

const messageFields = {
  seq: position.meta({ description: "The message's place in the conversation: 1, 2, 3…" }),
  turn: position,
  metadata: z.record(z.string(), z.unknown()),
  createdAt: z.iso.datetime(),
};

export const conversationMessageSchema = z
  .discriminatedUnion('role', [
    z.object({ ...messageFields, role: z.literal('user'), content: z.string() }),
    z.object({
      ...messageFields,
      role: z.literal('assistant'),
      content: z.string().nullable(),
      toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string().meta({ description: 'JSON text, as the model wrote it.' }) })),
    }),
    z.object({ ...messageFields, role: z.literal('tool'), content: z.string(), toolCallId: z.string(), isError: z.boolean() }),
  ])
  .meta({ id: 'ConversationMessage' });

export const turnCheckpointSchema = z
  .object({
    turn: position,
    firstSeq: position,
    lastSeq: position,
    question: z.string(),
    summary: z.string(),
    actionableSummary: z.string(),
    source,
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'TurnCheckpoint', description: "A turn's digest, which compaction sends in place of its messages." });

export const conversationSummarySchema = z
  .object({
    fromTurn: position,
    throughTurn: position,
    layers: z.array(
      z.object({
        level: z.enum(['brief', 'medium', 'detailed']),
        fromTurn: position,
        throughTurn: position,
        text: z.string(),
        source,
      }),
    ),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'ConversationSummary', description: 'The summary of the middle of a long conversation, oldest layer first.' });

export const conversationReplySchema = z
  .object({
    conversation: conversationSchema,
    messages: z.array(conversationMessageSchema),
    checkpoints: z.array(turnCheckpointSchema),
    summary: conversationSummarySchema.nullable(),
    tokens: z
      .object({
        history: z.number().int().min(0).meta({ description: 'The whole stored history, estimated.' }),
        compacted: z.number().int().min(0).meta({ description: 'The history as the next turn would send it, with checkpoints and summary.' }),
        fixed: z.number().int().min(0).meta({
          description:
            "What a request carries besides the history: system prompt, tool definitions, the question with its sources and tool results (the last turn's largest request, or an estimate when no turn was measured).",
        }),
        fixedMeasured: z.boolean().meta({ description: 'Whether `fixed` was measured on a turn rather than estimated.' }),
        nextRequest: z
          .number()
          .int()
          .min(0)
          .meta({ description: 'The next request as a whole, estimated: `fixed` plus the compacted history; compare it with `limit`.' }),
        limit: z.number().int().min(0).meta({ description: 'The tokens past which a request is compacted.' }),
        contextWindow: z.number().int().min(0),
        outputReserve: z.number().int().min(0),
      })
      .meta({ description: 'What the next request will cost, in estimated tokens, beside the limit.' }),
  })
  .meta({ id: 'ConversationReply' });

export const importConversationReplySchema = z
  .object({ conversation: conversationSchema, importedFrom: z.uuid().meta({ description: "The exported conversation's id." }) })
  .meta({ id: 'ImportConversationReply' });

/** What `POST /v1/conversations/{id}/turns` answers. */
export const recordTurnReplySchema = z
  .object({
    conversationId: z.uuid(),
    turn: z.number().int().min(1).meta({ description: 'The number the turn was stored under: 1 for the first turn of the conversation.' }),
  })
  .meta({ id: 'RecordedTurn' });
