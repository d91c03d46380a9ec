import type { AgentEvent, AgentHooks } from './agent-types.js';
import { EmptyReplyError } from './llm-errors.js';
import type { LlmProvider, LlmResult } from './llm-provider.js';
import type { AssistantMessage, ChatMessage, ToolCall, ToolSpec, Usage } from './messages.js';
import { repairToolResults } from './tool-history.js';

export const EMPTY_REPLY_NUDGE = 'Your previous reply was empty. Please answer the last message, or call a tool if you need one.';

export interface ModelCallOptions {
  provider: LlmProvider;
  systemPrompt: string | undefined;
  /** The conversation before this turn (no system message). */
  messages: readonly ChatMessage[];
  /** What the turn produced so far. */
  newMessages: readonly ChatMessage[];
  tools: ToolSpec[];
  hooks: readonly AgentHooks[];
  streaming: boolean;
  signal: AbortSignal | undefined;
  onEvent: ((event: AgentEvent) => void) | undefined;
  iteration: number;
  /** The turn's running total, added to by every request made here. */
  usage: Usage & { totalTokens: number };
  maxEmptyRetries: number;
  /** Asked between an empty reply and its retry: a retry past the budget is not made. */
  overBudget: () => boolean;
}

/**
 * One model call of the turn: the request (system prompt, repaired history, the hooks' changes),
 * streamed or not, with an empty reply answered by a nudge up to `maxEmptyRetries` times. The
 * reply's message with its call ids made unique, or undefined when the budget ran out between
 * empty replies.
 */
export async function callModel(options: ModelCallOptions): Promise<AssistantMessage | undefined> {
  const { provider, hooks, signal, onEvent, iteration, usage } = options;
  for (let emptyAttempt = 0; ; emptyAttempt++) {
    const history: ChatMessage[] = [
      ...(options.systemPrompt ? [{ role: 'system' as const, content: options.systemPrompt }] : []),
      ...repairToolResults([...options.messages, ...options.newMessages]),
      // The nudge lives only in the retried request; history keeps the real conversation.
      ...(emptyAttempt > 0 ? [{ role: 'user' as const, content: EMPTY_REPLY_NUDGE }] : []),
    ];
    let request = history;
    for (const hook of hooks) request = (await hook.beforeLlm?.(request)) ?? request;
    const reply: LlmResult = options.streaming
      ? await provider.stream({
          messages: request,
          tools: options.tools,
          signal,
          onDelta: (text) => onEvent?.({ type: 'delta', text, iteration }),
        })
      : await provider.complete({ messages: request, tools: options.tools, signal });
    usage.promptTokens += reply.usage.promptTokens;
    usage.completionTokens += reply.usage.completionTokens;
    usage.totalTokens = usage.promptTokens + usage.completionTokens;
    for (const hook of hooks) await hook.afterLlm?.(reply);
    if (!isEmpty(reply.message)) return normalizeToolCalls(reply.message);
    if (emptyAttempt >= options.maxEmptyRetries) {
      throw new EmptyReplyError(`Model returned an empty reply ${emptyAttempt + 1} times in a row`);
    }
    if (options.overBudget()) return undefined;
  }
}

function isEmpty(message: AssistantMessage): boolean {
  return (message.content ?? '').trim() === '' && message.toolCalls.length === 0;
}

/** Drops repeated call ids (some providers replay a call) and fills in missing ones. */
function normalizeToolCalls(message: AssistantMessage): AssistantMessage {
  const seen = new Set<string>();
  const toolCalls: ToolCall[] = [];
  for (const [i, call] of message.toolCalls.entries()) {
    const id = call.id || `call_${i}_${Math.random().toString(36).slice(2, 10)}`;
    if (seen.has(id)) continue;
    seen.add(id);
    toolCalls.push({ ...call, id });
  }
  return { ...message, toolCalls };
}
