import { z } from 'zod';
import { CHECKPOINT_QUESTION_MAX_CHARS } from '../../compaction/turn-checkpoint.js';
import type { ConversationExport } from '../../conversations/conversation-types.js';
import { CHAT_LIMITS } from './chat-schemas.js';
import { agentIdSchema, metadataSchema, notBlank, queryInt, storableString, userIdSchema } from './memory-schemas.js';

/** Every input limit of the conversation routes, in one place. */
export const CONVERSATION_LIMITS = {
  pageDefault: 20,
  pageMax: 200,
  cursorMaxChars: 512,
  importMaxMessages: 50_000,
  messageMaxChars: 1_000_000,
  toolCallsPerMessage: 128,
  summaryMaxChars: 100_000,
  summaryMaxLayers: 16,
} as const;

export const conversationIdParams = z.strictObject({ id: z.uuid() });

export const conversationAgentQuery = z.strictObject({ agentId: agentIdSchema.optional() });

/** What deleting a conversation does to the memories drawn from it (lineage). */
export const deleteConversationQuery = z.strictObject({
  ...conversationAgentQuery.shape,
  cascade: z
    .enum(['memories'])
    .optional()
    .meta({
      description:
        '`memories`: the memories whose every source lies in this conversation are deleted too. Absent: they stay, and their ' +
        'sources in it are marked `deleted` (quotes dropped).',
    }),
});

/** `?agentId=&userId=` of an import: both default to the export's. */
export const importConversationQuery = z.strictObject({
  agentId: agentIdSchema.optional(),
  userId: userIdSchema.optional().meta({ description: "The user the imported conversation is with; default the export's (none if it names none)." }),
});

export const listConversationsQuery = z.strictObject({
  agentId: agentIdSchema.optional(),
  userId: userIdSchema.optional().meta({ description: "Only the conversations with this user; default every user's." }),
  limit: queryInt(1, CONVERSATION_LIMITS.pageMax).default(CONVERSATION_LIMITS.pageDefault),
  cursor: z.string().max(CONVERSATION_LIMITS.cursorMaxChars).optional(),
});

/** A turn's text, blank and unstorable text refused: the question within the chat's limit, a reply as long as an imported message may be. */
const turnText = (max: number, description: string) => storableString(1, max).refine(notBlank, 'must not be blank').meta({ description });

/** `POST /v1/conversations/{id}/turns`: a turn the client ran with its own model, to be stored. */
export const recordTurnBody = z.strictObject({
  agentId: agentIdSchema.optional(),
  userId: userIdSchema.optional().meta({
    description: 'The user the turn is with. A conversation keeps the user of its first turn: recording into it with another (or none) is a 404.',
  }),
  user: turnText(CHAT_LIMITS.messageMaxChars, "The user's message."),
  assistant: turnText(CONVERSATION_LIMITS.messageMaxChars, "The model's reply, as the client received it."),
});

const position = z.number().int().min(1).max(10_000_000);
const text = (max: number) => storableString(0, max);
const timestamp = z.iso.datetime({ offset: true });

const common = {
  seq: position,
  turn: position,
  metadata: metadataSchema.optional(),
  createdAt: timestamp.optional(),
};

const toolCallSchema = z.strictObject({
  id: z.string().min(1).max(256),
  name: z.string().min(1).max(64),
  arguments: text(CONVERSATION_LIMITS.messageMaxChars),
});

const messageSchema = z.discriminatedUnion('role', [
  z.strictObject({ ...common, role: z.literal('user'), content: text(CONVERSATION_LIMITS.messageMaxChars) }),
  z.strictObject({
    ...common,
    role: z.literal('assistant'),
    content: text(CONVERSATION_LIMITS.messageMaxChars).nullable(),
    toolCalls: z.array(toolCallSchema).max(CONVERSATION_LIMITS.toolCallsPerMessage).default([]),
  }),
  z.strictObject({
    ...common,
    role: z.literal('tool'),
    content: text(CONVERSATION_LIMITS.messageMaxChars),
    toolCallId: z.string().min(1).max(256),
    isError: z.boolean().default(false),
  }),
]);

const checkpointSchema = z.strictObject({
  turn: position,
  firstSeq: position,
  lastSeq: position,
  question: text(CHECKPOINT_QUESTION_MAX_CHARS),
  summary: text(CONVERSATION_LIMITS.summaryMaxChars),
  actionableSummary: text(CONVERSATION_LIMITS.summaryMaxChars),
  source: z.enum(['llm', 'rules']),
});

const layerSchema = z.strictObject({
  level: z.enum(['brief', 'medium', 'detailed']),
  fromTurn: position,
  throughTurn: position,
  text: text(CONVERSATION_LIMITS.summaryMaxChars),
  source: z.enum(['llm', 'rules']),
});

const summarySchema = z.strictObject({
  fromTurn: position,
  throughTurn: position,
  layers: z.array(layerSchema).min(1).max(CONVERSATION_LIMITS.summaryMaxLayers),
});

/**
 * `POST /v1/conversations/import`: what `GET /v1/conversations/:id/export` wrote. Besides the
 * shapes, the history must be one a turn can continue: messages numbered 1, 2, 3…, turns that
 * start with the user (but for an opening turn of the assistant's), every tool call answered
 * before the next message, and checkpoints and summary that cover turns the conversation has.
 */
export const importConversationBody = z
  .strictObject({
    format: z.literal('memrag.conversation'),
    version: z.literal(1),
    conversation: z.strictObject({
      id: z.uuid(),
      agentId: agentIdSchema,
      // Absent from exports made before conversations had users.
      userId: userIdSchema.nullable().optional(),
      title: text(1_000),
      createdAt: timestamp,
      updatedAt: timestamp,
    }),
    messages: z.array(messageSchema).min(1).max(CONVERSATION_LIMITS.importMaxMessages),
    checkpoints: z.array(checkpointSchema).max(CONVERSATION_LIMITS.importMaxMessages).default([]),
    summary: summarySchema.nullable().default(null),
  })
  .superRefine((data, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const ranges = new Map<number, { first: number; last: number }>();
    let pending = new Set<string>();
    let pendingAt = -1;
    // The assistant may speak first (a greeting, a proactive message): that opening is a turn of
    // its own, as a client's history is numbered (`numberedMessages`), and the user's first
    // message starts the next.
    const opensWithAssistant = data.messages[0]?.role === 'assistant';
    for (const [i, m] of data.messages.entries()) {
      if (m.seq !== i + 1) return issue(['messages', i, 'seq'], `must be ${i + 1}: messages are numbered 1, 2, 3… in order`);
      const previous = data.messages[i - 1];
      const expected = previous ? [previous.turn, previous.turn + 1] : [1];
      if (!expected.includes(m.turn)) return issue(['messages', i, 'turn'], `must be ${expected.join(' or ')}`);
      const startsTurn = !previous || m.turn !== previous.turn;
      const opening = opensWithAssistant && m.turn === 1;
      if (startsTurn && m.role !== 'user' && !opening) return issue(['messages', i, 'role'], 'a turn must start with a user message');
      if (opening && m.role === 'user')
        return issue(['messages', i, 'turn'], `must be 2: the assistant's opening is turn 1, and the user's first message starts the next`);
      if (m.role === 'tool') {
        if (!pending.delete(m.toolCallId)) return issue(['messages', i, 'toolCallId'], 'answers no pending tool call of the assistant message before it');
      } else {
        if (pending.size > 0) return issue(['messages', pendingAt, 'toolCalls'], `calls ${[...pending].join(', ')} have no result before the next message`);
        pending = new Set(m.role === 'assistant' ? m.toolCalls.map((c) => c.id) : []);
        pendingAt = i;
      }
      const range = ranges.get(m.turn);
      ranges.set(m.turn, { first: range?.first ?? m.seq, last: m.seq });
    }
    if (pending.size > 0) return issue(['messages', pendingAt, 'toolCalls'], `calls ${[...pending].join(', ')} have no result`);

    const seen = new Set<number>();
    for (const [i, c] of data.checkpoints.entries()) {
      const range = ranges.get(c.turn);
      if (!range) return issue(['checkpoints', i, 'turn'], 'names a turn the conversation does not have');
      if (seen.has(c.turn)) return issue(['checkpoints', i, 'turn'], 'a turn has at most one checkpoint');
      seen.add(c.turn);
      if (c.firstSeq !== range.first || c.lastSeq !== range.last) {
        return issue(['checkpoints', i, 'firstSeq'], `must cover the turn's messages ${range.first}-${range.last}`);
      }
    }

    const summary = data.summary;
    if (summary) {
      const lastTurn = data.messages.at(-1)!.turn;
      if (summary.fromTurn > summary.throughTurn || summary.throughTurn > lastTurn) {
        return issue(['summary', 'throughTurn'], `must satisfy fromTurn <= throughTurn <= ${lastTurn} (the last turn)`);
      }
      let next = summary.fromTurn;
      for (const [i, layer] of summary.layers.entries()) {
        if (layer.fromTurn !== next || layer.throughTurn < layer.fromTurn)
          return issue(['summary', 'layers', i, 'fromTurn'], `must be ${next}: layers cover consecutive turns`);
        next = layer.throughTurn + 1;
      }
      if (next - 1 !== summary.throughTurn) return issue(['summary', 'layers'], `must end at turn ${summary.throughTurn}`);
    }
  })
  .transform((data): ConversationExport => data as ConversationExport);
