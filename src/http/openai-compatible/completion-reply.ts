import type { TurnReply } from '../../chat/chat-service.js';
import type { CompletionMessage } from '../../api/schemas/openai-schemas.js';

/** What every object of one completion shares. */
export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

type FinishReason = 'stop' | 'length' | 'tool_calls';

/**
 * The assistant message a reply leaves the client holding, as it will send it back: a stream's
 * client holds the text it was streamed (a model may write before it calls a tool, or between
 * the built-in tools it calls), a JSON client the answer.
 */
export function replyMessage(reply: TurnReply, streamedText?: string): CompletionMessage {
  if (reply.status === 'completed') return { role: 'assistant', content: streamedText ?? reply.answer };
  if (reply.status === 'requires_approval') return { role: 'assistant', content: approvalNotice(reply.runId) };
  return { role: 'assistant', content: streamedText || null, tool_calls: reply.requiredAction?.toolCalls ?? [] };
}

/** What an OpenAI client is told of a turn that waits for a person: OpenAI's shapes have no word for it. */
export function approvalNotice(runId: string): string {
  return `This turn waits for a person to approve a tool call: decide with POST /v1/runs/${runId}/approvals.`;
}

export function finishReasonOf(reply: TurnReply): FinishReason {
  if (reply.status === 'requires_action') return 'tool_calls';
  if (reply.status === 'completed' && reply.stopReason !== 'completed') return 'length';
  return 'stop';
}

/** The usage in OpenAI's shape, with its detail objects when the provider reported cached or reasoning tokens. */
export function usageOf(reply: TurnReply) {
  const { promptTokens, completionTokens, totalTokens, cachedTokens, reasoningTokens } = reply.usage;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: totalTokens,
    ...(cachedTokens ? { prompt_tokens_details: { cached_tokens: cachedTokens } } : {}),
    ...(reasoningTokens ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } } : {}),
  };
}

/** The field OpenAI clients ignore: what memrag cited, and where the turn went. */
export function memragField(reply: TurnReply) {
  const common = { runId: reply.runId, conversationId: reply.conversationId, costUsd: reply.costUsd };
  if (reply.status === 'completed') return { ...common, citations: reply.citations, mode: reply.mode };
  return { ...common, citations: [], status: reply.status, ...(reply.approvals ? { approvals: reply.approvals } : {}) };
}

/**
 * `chat.completion`: the reply in OpenAI's shape. `includeReasoning`: the model's reasoning as
 * `reasoning_content` (as DeepSeek and vLLM send it), never in `content`; the thread's key is of
 * `replyMessage`, which has none, since clients differ in whether they send it back.
 */
export function completionOf(reply: TurnReply, identity: CompletionIdentity, options: { includeReasoning?: boolean } = {}) {
  const message = replyMessage(reply);
  const reasoning = options.includeReasoning && reply.status === 'completed' ? reply.reasoning : undefined;
  return {
    ...identity,
    object: 'chat.completion' as const,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant' as const,
          content: typeof message.content === 'string' ? message.content : null,
          refusal: null,
          ...(message.role === 'assistant' && message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}),
          ...(reasoning ? { reasoning_content: reasoning } : {}),
        },
        finish_reason: finishReasonOf(reply),
        logprobs: null,
      },
    ],
    usage: usageOf(reply),
    memrag: memragField(reply),
  };
}

/** One `chat.completion.chunk`. */
export function chunkOf(identity: CompletionIdentity, delta: Record<string, unknown>, finishReason: FinishReason | null = null) {
  return { ...identity, object: 'chat.completion.chunk' as const, choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] };
}
