import { z } from 'zod';
import { memoryOriginSchema } from './memory-reply-schemas.js';
import { RUN_STATUSES } from '../../runs/run-types.js';
import { errorReplySchema } from './error-reply-schemas.js';

/** What `POST /v1/chat` answers: one JSON reply, or Server-Sent Events whose `done` carries the same reply. */

const sourceNumber = z.number().int().min(1).meta({ description: 'The `n` of `[n]` in the answer.' });
const documentPlace = {
  documentId: z.uuid(),
  title: z.string(),
  chunkId: z.uuid(),
  headingPath: z.array(z.string()),
  start: z.number().int().min(0),
  end: z.number().int().min(0),
};

const turnPlace = {
  conversationId: z.uuid().meta({ description: 'Another conversation of the same agent and user.' }),
  turn: z.number().int().min(1).meta({ description: "The turn's number in that conversation." }),
};

export const citationSchema = z
  .discriminatedUnion('kind', [
    z.object({
      id: sourceNumber,
      kind: z.literal('memory'),
      key: z.string(),
      agentId: z.string(),
      snippet: z.string(),
      sources: z.array(memoryOriginSchema).meta({ description: "Where the memory came from: the turn and the user's words it was drawn from." }),
    }),
    z.object({
      id: sourceNumber,
      kind: z.literal('document'),
      ...documentPlace,
      snippet: z.string(),
      quotes: z
        .array(z.object({ start: z.number().int().min(0), end: z.number().int().min(0) }))
        .optional()
        .meta({ description: "Extractive answers: the quoted sentences' character ranges in the document's text, beside the chunk's `start`/`end`." }),
    }),
    z.object({ id: sourceNumber, kind: z.literal('turn'), ...turnPlace, snippet: z.string() }),
  ])
  .meta({ id: 'Citation', description: 'What one `[n]` of the answer cites: a memory, a chunk of a document, or a past turn.' });

/** A source as the model saw it, full text included; `retrieval` and `tool_end` events carry them. */
export const chatSourceSchema = z
  .discriminatedUnion('kind', [
    z.object({
      id: sourceNumber,
      kind: z.literal('memory'),
      key: z.string(),
      agentId: z.string(),
      content: z.string(),
      tags: z.array(z.string()),
      score: z.number(),
      sources: z.array(memoryOriginSchema).optional(),
    }),
    z.object({ id: sourceNumber, kind: z.literal('document'), ...documentPlace, text: z.string(), score: z.number() }),
    z.object({
      id: sourceNumber,
      kind: z.literal('turn'),
      ...turnPlace,
      question: z.string(),
      answer: z.string(),
      at: z.iso.datetime().meta({ description: 'When the question was asked.' }),
      score: z.number(),
    }),
  ])
  .meta({ id: 'ChatSource' });

export const chatToolCallSchema = z
  .object({
    id: z.string(),
    name: z.string().meta({ description: '`search_memories`, `save_memory`, `delete_memory` or `search_knowledge`.' }),
    arguments: z.unknown().meta({ description: 'As the tool got them: parsed (repaired when the model sent almost-JSON), else the raw text.' }),
    result: z.string().meta({ description: "A preview of the tool's result." }),
    isError: z.boolean(),
  })
  .meta({ id: 'ChatToolCall' });

const runId = z.uuid().meta({ description: 'The run of this turn: `GET /v1/runs/{runId}`.' });
const usageSchema = z.object({
  promptTokens: z.number().int().min(0),
  completionTokens: z.number().int().min(0),
  totalTokens: z.number().int().min(0),
  cachedTokens: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'Prompt tokens the provider served from its prefix cache (part of `promptTokens`); absent when it reported none.' }),
  reasoningTokens: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'Completion tokens the model spent reasoning (part of `completionTokens`); absent when it reported none.' }),
});

/** Every reason a turn ends with, besides a pause: as `StopReason` in llm/agent-types.ts. */
export const STOP_REASONS = ['completed', 'max_iterations', 'budget', 'max_tokens'] as const;

export const chatReplySchema = z
  .object({
    runId,
    status: z.literal('completed'),
    conversationId: z.uuid().meta({ description: "The request's, or a new one." }),
    answer: z.string(),
    citations: z.array(citationSchema),
    toolCalls: z.array(chatToolCallSchema),
    usage: usageSchema,
    costUsd: z.number().nullable().meta({ description: 'Null when no price is known for the model (LLM_PRICES), or no model ran.' }),
    stopReason: z.enum(STOP_REASONS).meta({
      description: '`max_tokens`: the last reply was still cut by the output limit after its continuations (`truncation.maxContinuations`).',
    }),
    reasoning: z
      .string()
      .optional()
      .meta({ description: "The model's reasoning this turn, with `includeReasoning: true` (and a model that gave some); never part of `answer`." }),
    mode: z.enum(['llm', 'extractive']).meta({
      description: '`extractive` without a configured LLM: sentences of the sources that answer the question, each cited, or a statement that none does.',
    }),
    note: z.string().optional().meta({ description: 'Why the reply is what it is, when that needs saying (e.g. extractive).' }),
  })
  .meta({ id: 'ChatReply' });

const delegatedRunId = z
  .uuid()
  .optional()
  .meta({ description: "A delegation's call, listed by its lead: the child run that asked for it. Answer it through the lead's run all the same." });

const requiredActionSchema = z
  .object({
    type: z.literal('submit_tool_outputs'),
    toolCalls: z.array(
      z.object({
        id: z.string().meta({ description: 'Answer with this id as `toolCallId`.' }),
        type: z.literal('function'),
        function: z.object({ name: z.string(), arguments: z.string().meta({ description: 'JSON text, as the model wrote it.' }) }),
        runId: delegatedRunId,
      }),
    ),
  })
  .meta({ description: 'The client tool calls to run; answer them all in one `POST /v1/runs/{runId}/tool-outputs`.' });

const approvalRequestSchema = z
  .object({
    toolCallId: z.string(),
    name: z.string(),
    arguments: z.unknown().meta({ description: 'As the tool would get them: parsed (repaired when the model sent almost-JSON), else the raw text.' }),
    runId: delegatedRunId,
  })
  .meta({ id: 'ApprovalRequest', description: "A call to a tool in the agent's approval list; decide it with `POST /v1/runs/{runId}/approvals`." });

export const pausedReplySchema = z
  .object({
    runId,
    status: z
      .enum(['requires_action', 'requires_approval', 'paused'])
      .meta({ description: '`paused`: stopped on request (`POST /v1/runs/{runId}/pause`); resume it with `POST /v1/runs/{runId}/resume`.' }),
    conversationId: z.uuid(),
    requiredAction: requiredActionSchema.optional().meta({ description: 'With `requires_action`.' }),
    approvals: z.array(approvalRequestSchema).optional().meta({ description: 'With `requires_approval`.' }),
    toolCalls: z.array(chatToolCallSchema).meta({ description: 'The calls run so far this turn.' }),
    usage: usageSchema,
    costUsd: z.number().nullable(),
    expiresAt: z.iso.datetime().meta({ description: 'Unanswered past this time (RUN_TTL_SECONDS), the run expires.' }),
  })
  .meta({
    id: 'PausedReply',
    description: "A turn waiting for the client: its tools' outputs (`requires_action`), or a person's decisions (`requires_approval`).",
  });

/** What a turn answers: the reply, or a pause. */
export const turnReplySchema = z.union([chatReplySchema, pausedReplySchema]).meta({ id: 'TurnReply' });

export const runSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(RUN_STATUSES),
    agentId: z.string(),
    userId: z.string().nullable(),
    conversationId: z.uuid(),
    agentVersion: z.number().int().nullable().meta({ description: 'The agent version the run started with; null without an agent record.' }),
    usage: usageSchema,
    stopReason: z.string().nullable().meta({ description: '`completed`, `max_iterations`, `budget` or `max_tokens` once the turn has ended.' }),
    error: z.record(z.string(), z.unknown()).nullable().meta({ description: 'Why a failed or cancelled run ended: `{code, message}`.' }),
    expiresAt: z.iso.datetime().nullable(),
    followUps: z.array(z.object({ runId: z.uuid(), message: z.string() })).meta({
      description:
        'Messages queued with `mode: "follow_up"`: each starts the next turn of the conversation, as the run `runId`, once the one before completes.',
    }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    requiredAction: requiredActionSchema.optional(),
    approvals: z.array(approvalRequestSchema).optional(),
    parentRunId: z.uuid().nullable().meta({ description: "The run that started this one: a delegation's lead, a workflow step's workflow run." }),
    role: z.string().nullable().meta({ description: 'Under a parent: the role (a delegation) or node (a workflow step) it ran as.' }),
    children: z
      .array(
        z.object({
          runId: z.uuid(),
          agentId: z.string(),
          role: z.string().nullable(),
          status: z.enum(RUN_STATUSES),
          usage: usageSchema,
        }),
      )
      .optional()
      .meta({ description: "The runs started under this one, oldest first: a lead's delegations, a workflow run's steps." }),
    reasoning: z.string().optional().meta({
      description:
        "The model's reasoning over the turn (a paused run's so far), only with `?includeReasoning=true` and a model that gave some; never part of the answer.",
    }),
  })
  .meta({ id: 'Run' });

// As CompactionStrategy in compaction/compactor.ts, which is a type only.
const compactionStrategy = z.enum(['checkpoints', 'structural_summary', 'drop_turns', 'truncate_tool_results']);

/** One SSE frame: `event: <event>` and `data: <data as JSON>`. */
export const chatStreamEventSchema = z
  .discriminatedUnion('event', [
    z.object({
      event: z.literal('retrieval'),
      data: z.object({ runId, conversationId: z.uuid(), sources: z.array(chatSourceSchema) }),
    }),
    z.object({ event: z.literal('delta'), data: z.object({ text: z.string().meta({ description: 'The next piece of the answer.' }) }) }),
    z.object({
      event: z.literal('thinking'),
      data: z.object({ text: z.string().meta({ description: "The next piece of the model's reasoning; never part of the answer." }) }),
    }),
    z.object({
      event: z.literal('turn_start'),
      data: z.object({
        iteration: z.number().int().min(1).meta({ description: "The turn's model call (a continuation or a retry of an empty reply shares its number)." }),
      }),
    }),
    z.object({
      event: z.literal('turn_end'),
      data: z.object({
        iteration: z.number().int().min(1),
        finishReason: z.string().nullable().meta({ description: 'As the provider said: `stop`, `tool_calls`, `length`, …' }),
        usage: usageSchema.meta({ description: "This request's usage alone." }),
      }),
    }),
    z.object({
      event: z.literal('retry'),
      data: z.object({
        attempt: z.number().int().min(1).meta({ description: 'The attempt that failed.' }),
        delayMs: z.number().int().min(0).meta({ description: 'The wait before the next attempt.' }),
        status: z.number().int().nullable().meta({ description: "The provider's HTTP status; null for a dropped connection or a timeout." }),
        reason: z.string(),
      }),
    }),
    z.object({
      event: z.literal('steer'),
      data: z
        .object({ message: z.string() })
        .meta({ description: 'A steering message (`POST /v1/runs/{runId}/messages`) joined the turn before its next model call.' }),
    }),
    z.object({
      event: z.literal('tool_start'),
      data: z.object({ id: z.string(), name: z.string(), arguments: z.unknown() }),
    }),
    z.object({
      event: z.literal('tool_end'),
      data: z.object({
        id: z.string(),
        name: z.string(),
        isError: z.boolean(),
        result: z.string(),
        sources: z.array(chatSourceSchema).meta({ description: 'Sources the tool found, numbered after those before.' }),
      }),
    }),
    z.object({
      event: z.literal('compaction'),
      data: z
        .object({
          strategy: compactionStrategy.meta({ description: 'The last (strongest) stage applied.' }),
          strategies: z.array(compactionStrategy),
          tokensBefore: z.number().int().min(0),
          tokensAfter: z.number().int().min(0),
          limit: z.number().int().min(0),
          summarizerCalls: z
            .number()
            .int()
            .min(0)
            .meta({ description: 'Summarising requests this compaction waited on; 0 when the stored summary and checkpoints sufficed.' }),
        })
        .meta({ description: "The conversation's history was compacted to fit the model's window before a model call." }),
    }),
    z.object({
      event: z.literal('delegate_start'),
      data: z.object({ role: z.string(), agentId: z.string(), runId }).meta({ description: 'A `delegate` call started a child run.' }),
    }),
    z.object({
      event: z.literal('delegate_end'),
      data: z.object({ runId, status: z.string().meta({ description: "The child run's status as it ended or paused." }) }),
    }),
    z.object({
      event: z.literal('child'),
      data: z
        .object({
          type: z.literal('child'),
          runId,
          event: z.record(z.string(), z.unknown()).meta({ description: "The child's event: `type` its name, beside its data." }),
        })
        .meta({ description: "A child run's own event, forwarded to a streaming lead." }),
    }),
    z.object({ event: z.literal('done'), data: chatReplySchema }),
    z.object({ event: z.literal('requires_action'), data: pausedReplySchema }),
    z.object({ event: z.literal('requires_approval'), data: pausedReplySchema }),
    z.object({ event: z.literal('paused'), data: pausedReplySchema }),
    z.object({
      event: z.literal('error'),
      data: errorReplySchema.extend({
        status: z.number().int().meta({ description: 'The HTTP status the error would have had; headers were already sent.' }),
      }),
    }),
  ])
  .meta({
    id: 'ChatStreamEvent',
    description:
      'One Server-Sent Event of a streamed chat, as `id: <n>`, `event: <event>` and `data: <data as JSON>`: `retrieval` first (the recalled ' +
      'sources), then each model call framed by `turn_start` and `turn_end` (its `thinking` and `delta`s between them, `retry` when it is retried), ' +
      '`tool_start`/`tool_end` pairs and `compaction` notices, and last either `done` (the whole reply, as without ' +
      "streaming), `requires_action` or `requires_approval` (the run waits for the client), or `error`. Ids go on across a run's pauses; " +
      'a client that lost the stream reconnects to `GET /v1/runs/{runId}/events` with `Last-Event-ID`.',
  });
