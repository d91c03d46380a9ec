import { z } from 'zod';
import { SAMPLING_LIMITS } from '../../agents/model-settings.js';
import { REASONING_EFFORTS } from '../../llm/reasoning.js';
import { storable } from '../../text/storable-string.js';
import { CHAT_LIMITS, clientToolsSchema } from './chat-schemas.js';
import { userIdSchema } from './memory-schemas.js';
import { RUN_LIMITS } from './run-schemas.js';

/**
 * `POST /v1/chat/completions` in OpenAI's shapes. Objects are not strict: parameters memrag does
 * not use (`temperature`, `seed`, `logprobs`, ...) are accepted and ignored, as OpenAI-compatible
 * servers do; what memrag reads is checked as OpenAI would.
 */

/** The parameters accepted and ignored; listed in docs/integrations.md. */
export const IGNORED_COMPLETION_PARAMETERS = [
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'response_format',
  'tool_choice',
  'parallel_tool_calls',
  'store',
  'metadata',
  'service_tier',
  'modalities',
  'prediction',
  'audio',
] as const;

const stopSequence = z.string().min(1).max(SAMPLING_LIMITS.stopMaxChars, `at most ${SAMPLING_LIMITS.stopMaxChars} characters`);

/** OpenAI's sampling parameters, passed on to the agent's model (over the agent's own settings), checked as OpenAI checks them. */
export const completionSamplingFields = {
  temperature: z.number().min(0).max(2).nullish(),
  // The chat's own sampling limits (samplingSchema): one turn's settings must not depend on the route that sent them.
  top_p: z.number().gt(0).max(1).nullish(),
  max_tokens: z.number().int().min(1).max(SAMPLING_LIMITS.maxTokensMax).nullish(),
  max_completion_tokens: z.number().int().min(1).max(SAMPLING_LIMITS.maxTokensMax).nullish(),
  stop: z.union([stopSequence, z.array(stopSequence).max(SAMPLING_LIMITS.stopMax, `at most ${SAMPLING_LIMITS.stopMax} stop sequences`)]).nullish(),
  seed: z.number().int().nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  reasoning_effort: z.enum(REASONING_EFFORTS).nullish(),
};

const textPart = z.object({ type: z.literal('text'), text: z.string() });

const imageUrlPart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});

/**
 * A message's content: a string, or text and image parts (images are read in user messages only;
 * a data URL's bytes are checked against IMAGE_MAX_BYTES by the route, which knows the limit).
 */
const contentSchema = z.union([
  z.string(),
  z
    .array(
      z.looseObject({ type: z.string() }).superRefine((part, ctx) => {
        if (part.type === 'image_url') {
          if (!imageUrlPart.safeParse(part).success) ctx.addIssue({ code: 'custom', path: ['image_url', 'url'], message: 'an image part needs its url' });
        } else if (part.type !== 'text')
          ctx.addIssue({ code: 'custom', path: ['type'], message: `${JSON.stringify(part.type)} parts are not read: send text or image_url` });
        else if (!textPart.safeParse(part).success) ctx.addIssue({ code: 'custom', path: ['text'], message: 'a text part needs its text' });
      }),
    )
    .max(1000),
]);

/** The image parts of a message's content, as OpenAI clients send them. */
export function imagePartsOf(
  content: z.output<typeof contentSchema> | null | undefined,
): Array<{ index: number; url: string; detail?: 'auto' | 'low' | 'high' }> {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part, index) => {
    const image = imageUrlPart.safeParse(part);
    return image.success ? [{ index, url: image.data.image_url.url, ...(image.data.image_url.detail ? { detail: image.data.image_url.detail } : {}) }] : [];
  });
}

const toolCallSchema = z.object({
  id: z.string().min(1).max(200),
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1).max(64), arguments: z.string() }),
});

const systemMessage = z.object({ role: z.enum(['system', 'developer']), content: contentSchema, name: z.string().optional() });
const userMessage = z.object({ role: z.literal('user'), content: contentSchema, name: z.string().optional() });
const assistantMessage = z.object({
  role: z.literal('assistant'),
  content: contentSchema.nullish(),
  tool_calls: z.array(toolCallSchema).max(RUN_LIMITS.answersMax).optional(),
  name: z.string().optional(),
  refusal: z.string().nullish(),
});
const toolMessage = z.object({
  role: z.literal('tool'),
  tool_call_id: z.string().min(1).max(200),
  content: contentSchema,
});

const MESSAGES_MAX = 2000;

export const completionMessageSchema = z
  .discriminatedUnion('role', [systemMessage, userMessage, assistantMessage, toolMessage], {
    error: (issue) => (issue.code === 'invalid_union' ? 'role must be one of "system", "developer", "user", "assistant" or "tool"' : undefined),
  })
  .meta({ id: 'CompletionMessage' });

export type CompletionMessage = z.output<typeof completionMessageSchema>;

export const completionRequestSchema = z
  .looseObject({
    model: z.string().min(1).max(300).meta({ description: '`memrag` (the default agent) or `memrag:<agentId>`; `GET /v1/models` lists them.' }),
    messages: z
      .array(completionMessageSchema)
      .min(1)
      .max(MESSAGES_MAX)
      .superRefine((messages, ctx) => {
        const last = messages.at(-1);
        if (last && last.role !== 'user' && last.role !== 'tool')
          ctx.addIssue({ code: 'custom', path: [messages.length - 1, 'role'], message: 'the last message must be from the user, or a tool result' });
        if (last?.role === 'user' && textOf(last.content).trim() === '')
          ctx.addIssue({ code: 'custom', path: [messages.length - 1, 'content'], message: 'the question must not be blank' });
        if (last?.role === 'user') {
          const problem = questionSchema.safeParse(textOf(last.content));
          if (!problem.success) ctx.addIssue({ code: 'custom', path: [messages.length - 1, 'content'], message: problem.error.issues[0]!.message });
        }
        messages.forEach((message, i) => {
          if (message.role !== 'user')
            for (const { index } of imagePartsOf(message.content))
              ctx.addIssue({ code: 'custom', path: [i, 'content', index, 'type'], message: 'images are read in user messages only' });
          if (message.role !== 'tool') return;
          const output = toolOutputSchema.safeParse(textOf(message.content));
          if (!output.success) ctx.addIssue({ code: 'custom', path: [i, 'content'], message: output.error.issues[0]!.message });
        });
      }),
    stream: z.boolean().nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
    n: z
      .number()
      .int()
      .nullish()
      .refine((n) => n === null || n === undefined || n === 1, 'memrag answers one choice: n must be 1'),
    user: userIdSchema.optional().meta({
      description:
        "The user whose memories and past turns are recalled (else the `X-Memrag-User-Id` header). Neither: the agent's shared memories only, and past turns of conversations with no user.",
    }),
    tools: clientToolsSchema.optional().meta({ description: 'Tools the client runs: a call comes back as `tool_calls` with `finish_reason: "tool_calls"`.' }),
    ...completionSamplingFields,
    include_reasoning: z.boolean().nullish().meta({
      description:
        "The model's reasoning as the message's `reasoning_content` (`delta.reasoning_content` when streamed); `reasoning_effort` given asks for it too.",
    }),
  })
  .meta({ id: 'ChatCompletionRequest' });

export type CompletionRequest = z.output<typeof completionRequestSchema>;

/** The question is stored as a turn's user message, so it is held to the chat's limits. */
const questionSchema = storable(z.string().max(CHAT_LIMITS.messageMaxChars, `must be at most ${CHAT_LIMITS.messageMaxChars} characters`));
/** A tool's output is kept in the paused run's state until it resumes. */
const toolOutputSchema = storable(z.string().max(RUN_LIMITS.outputMaxChars, `must be at most ${RUN_LIMITS.outputMaxChars} characters`));

/** A message's text: a string, or its text parts joined. */
export function textOf(content: z.output<typeof contentSchema> | null | undefined): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

const usageSchema = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  prompt_tokens_details: z.object({ cached_tokens: z.number().int() }).optional(),
  completion_tokens_details: z.object({ reasoning_tokens: z.number().int() }).optional(),
});

/** What memrag adds to a completion; OpenAI clients ignore it. */
const memragFieldSchema = z
  .object({
    runId: z.uuid(),
    conversationId: z.uuid(),
    citations: z.array(z.record(z.string(), z.unknown())),
    mode: z.enum(['llm', 'extractive']).optional(),
    costUsd: z.number().nullable().optional(),
    status: z.string().optional().meta({ description: '`requires_approval` when the turn waits for a decision (`POST /v1/runs/{runId}/approvals`).' }),
  })
  .meta({ description: 'The citations of the answer and the run and conversation it was stored under.' });

export const completionReplySchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          refusal: z.null(),
          tool_calls: z.array(toolCallSchema).optional(),
          reasoning_content: z.string().optional().meta({
            description: "The model's reasoning, when the request asked for it (`include_reasoning`, or `reasoning_effort` given); never in `content`.",
          }),
        }),
        finish_reason: z.enum(['stop', 'length', 'tool_calls']),
        logprobs: z.null(),
      }),
    ),
    usage: usageSchema,
    memrag: memragFieldSchema,
  })
  .meta({ id: 'ChatCompletion' });

export const completionChunkSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(z.record(z.string(), z.unknown())),
    usage: usageSchema.nullish(),
    memrag: memragFieldSchema.optional(),
  })
  .meta({ id: 'ChatCompletionChunk', description: 'One `data:` frame of a streamed completion; the stream ends with `data: [DONE]`.' });

export const modelSchema = z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() }).meta({ id: 'Model' });

export const modelListSchema = z.object({ object: z.literal('list'), data: z.array(modelSchema) }).meta({ id: 'ModelList' });

export const openAiErrorSchema = z
  .object({
    error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
  })
  .meta({ id: 'OpenAiError', description: "OpenAI's error shape, which the OpenAI-compatible routes answer in." });
