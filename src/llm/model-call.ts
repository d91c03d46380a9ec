import type { AgentEvent, AgentHooks } from './agent-types.js';
import { continuationMessages, wasCut } from './continuation.js';
import { EmptyReplyError } from './llm-errors.js';
import type { LlmProvider, LlmRequest, LlmResult, LlmStreamRequest } from './llm-provider.js';
import type { AssistantMessage, ChatMessage, ToolCall, ToolSpec, Usage } from './messages.js';
import type { CallOptions } from './sampling.js';
import { appendRepaired } from './tool-history.js';
import { addUsage } from './wire-usage.js';

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
  /** Sampling and reasoning effort for every request made here. */
  callOptions?: CallOptions;
  /** Continuations of a reply the output limit cut, at most (0: none). */
  maxContinuations?: number;
}

export interface ModelCallResult {
  /** The reply, a cut one joined with its continuations. */
  message: AssistantMessage;
  /** Still cut by the output limit after the continuations allowed. */
  truncated: boolean;
  /** The model's reasoning over this call's requests; undefined when it gave none. */
  reasoning?: string;
}

/**
 * One model call of the turn: the request (system prompt, repaired history, the hooks' changes),
 * streamed or not, with an empty reply answered by a nudge up to `maxEmptyRetries` times and a
 * reply cut by the output limit continued up to `maxContinuations` times. The reply's message
 * with its call ids made unique, or undefined when the budget ran out between empty replies.
 */
export async function callModel(options: ModelCallOptions): Promise<ModelCallResult | undefined> {
  // Made once per call and only with a listener: a turn without one pays for none of its events.
  const report = options.onEvent ? reporters(options.onEvent, options.iteration, options.streaming) : undefined;
  const prepared = prepare(options, report, undefined);
  // Awaited here, not in a helper of its own: every await between the provider's answer and the
  // loop going on is time the turn spends (issue 55's overhead measure).
  const reply = await send(options, prepared instanceof Promise ? await prepared : prepared);
  // Awaited only when there are hooks: an await of nothing still costs the turn a step.
  const hooked = received(options, report, reply);
  if (hooked) await hooked;
  // The usual reply, neither empty nor cut, is done; this function stays small so that the JIT
  // optimises it early, the retries and continuations being elsewhere.
  if (isEmpty(reply.message) || wasCut(reply.finishReason)) return settle(options, report, reply);
  const result: ModelCallResult = { message: normalizeToolCalls(reply.message), truncated: false };
  if (reply.reasoning) result.reasoning = reply.reasoning;
  return result;
}

/** A first reply that was empty or cut: nudged up to `maxEmptyRetries` times, continued up to `maxContinuations` times. */
async function settle(options: ModelCallOptions, report: Reporters | undefined, first: LlmResult): Promise<ModelCallResult | undefined> {
  let reasoning: string[] | undefined;
  let reply = first;
  if (reply.reasoning) reasoning = [reply.reasoning];
  for (let emptyAttempt = 0; ; emptyAttempt++) {
    if (emptyAttempt > 0) {
      // The nudge lives only in the retried request; history keeps the real conversation.
      reply = await sendPrepared(options, report, [{ role: 'user', content: EMPTY_REPLY_NUDGE }]);
      if (reply.reasoning) (reasoning ??= []).push(reply.reasoning);
    }
    if (!isEmpty(reply.message)) break;
    // A reply the limit cut before any answer (a reasoning model that spent it all thinking) is
    // not empty by choice: nudging it would be cut again.
    if (wasCut(reply.finishReason)) return withReasoning({ message: reply.message, truncated: true }, reasoning);
    if (emptyAttempt >= options.maxEmptyRetries) {
      throw new EmptyReplyError(`Model returned an empty reply ${emptyAttempt + 1} times in a row`);
    }
    if (options.overBudget()) return undefined;
  }
  let { message } = reply;
  let finishReason = reply.finishReason;
  // A cut tool call cannot be continued as text: its arguments go to the tools' repair.
  for (let n = 0; n < (options.maxContinuations ?? 0) && wasCut(finishReason) && message.toolCalls.length === 0; n++) {
    if (options.overBudget()) break;
    const partial = message.content ?? '';
    const next = await sendPrepared(options, report, continuationMessages(partial));
    if (next.reasoning) (reasoning ??= []).push(next.reasoning);
    message = { role: 'assistant', content: partial + (next.message.content ?? ''), toolCalls: next.message.toolCalls };
    finishReason = next.finishReason;
  }
  const truncated = wasCut(finishReason) && message.toolCalls.length === 0;
  return withReasoning({ message: normalizeToolCalls(message), truncated }, reasoning);
}

/** A request after the first: prepared, sent, and received. */
async function sendPrepared(options: ModelCallOptions, report: Reporters | undefined, extra: readonly ChatMessage[]): Promise<LlmResult> {
  const prepared = prepare(options, report, extra);
  const reply = await send(options, prepared instanceof Promise ? await prepared : prepared);
  // Awaited only when there are hooks: an await of nothing still costs the turn a step.
  const hooked = received(options, report, reply);
  if (hooked) await hooked;
  return reply;
}

/** A model call's listeners for the provider, bound to its iteration. */
interface Reporters {
  onEvent: (event: AgentEvent) => void;
  onRetry: NonNullable<LlmRequest['onRetry']>;
  onDelta?: (text: string) => void;
  onReasoning?: (text: string) => void;
}

function reporters(onEvent: (event: AgentEvent) => void, iteration: number, streaming: boolean): Reporters {
  // Assigned, not written in the literal: a function named by its property is renamed at every
  // creation by the keep-names transform tsx applies, a cost paid per model call.
  const report: Reporters = { onEvent, onRetry: ignore };
  report.onRetry = ({ attempt, delayMs, error }) =>
    onEvent({ type: 'retry', iteration, attempt, delayMs, status: error.status ?? null, reason: error.message });
  if (streaming) {
    report.onDelta = (text) => onEvent({ type: 'delta', text, iteration });
    report.onReasoning = (text) => onEvent({ type: 'thinking', text, iteration });
  }
  return report;
}

/**
 * One request's parameters (system prompt, repaired history, `extra`, the hooks' changes), its
 * `turn_start` told; a promise only when a hook changes requests.
 */
function prepare(options: ModelCallOptions, report: Reporters | undefined, extra: readonly ChatMessage[] | undefined): LlmRequest | Promise<LlmRequest> {
  const history: ChatMessage[] = options.systemPrompt ? [{ role: 'system', content: options.systemPrompt }] : [];
  appendRepaired(history, options.messages, options.newMessages);
  if (extra) history.push(...extra);
  if (options.hooks.length > 0 && options.hooks.some((hook) => hook.beforeLlm))
    return beforeHooks(options.hooks, history).then((messages) => params(options, report, messages));
  return params(options, report, history);
}

async function beforeHooks(hooks: readonly AgentHooks[], history: ChatMessage[]): Promise<ChatMessage[]> {
  let messages = history;
  for (const hook of hooks) messages = (await hook.beforeLlm?.(messages)) ?? messages;
  return messages;
}

function params(options: ModelCallOptions, report: Reporters | undefined, messages: ChatMessage[]): LlmRequest {
  report?.onEvent({ type: 'turn_start', iteration: options.iteration });
  const request: LlmRequest = { messages, tools: options.tools, signal: options.signal };
  if (options.callOptions) request.options = options.callOptions;
  if (report) request.onRetry = report.onRetry;
  if (options.streaming) {
    const streamed = request as LlmStreamRequest;
    streamed.onDelta = report?.onDelta ?? ignore;
    streamed.onReasoning = report?.onReasoning ?? ignore;
  }
  return request;
}

/** The provider's own promise, not one wrapped around it. */
function send(options: ModelCallOptions, request: LlmRequest): Promise<LlmResult> {
  return options.streaming ? options.provider.stream(request as LlmStreamRequest) : options.provider.complete(request);
}

/**
 * A request answered: its usage added to the turn's, its reasoning (when not streamed) and
 * `turn_end` told, the hooks' `afterLlm` run; a promise only when there are hooks.
 */
function received(options: ModelCallOptions, report: Reporters | undefined, reply: LlmResult): Promise<void> | undefined {
  addUsage(options.usage, reply.usage);
  if (reply.reasoning && !options.streaming) report?.onEvent({ type: 'thinking', text: reply.reasoning, iteration: options.iteration });
  report?.onEvent({ type: 'turn_end', iteration: options.iteration, finishReason: reply.finishReason, usage: reply.usage });
  return options.hooks.length > 0 ? afterHooks(options.hooks, reply) : undefined;
}

async function afterHooks(hooks: readonly AgentHooks[], reply: LlmResult): Promise<void> {
  for (const hook of hooks) await hook.afterLlm?.(reply);
}

const ignore = (): void => {};

function withReasoning(result: ModelCallResult, reasoning: string[] | undefined): ModelCallResult {
  if (reasoning) result.reasoning = reasoning.join('\n\n');
  return result;
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

/** Adds a call's reasoning to the turn's record, apart from the answer and the history. */
export function keepReasoning(state: { reasoning?: string }, reasoning: string | undefined): void {
  if (!reasoning) return;
  state.reasoning = state.reasoning ? `${state.reasoning}\n\n${reasoning}` : reasoning;
}
