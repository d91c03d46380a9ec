import { AbortedError, EmptyReplyError } from './llm-errors.js';
import type { LlmProvider, LlmResult } from './llm-provider.js';
import type { AssistantMessage, ChatMessage, ToolCall, ToolMessage, Usage } from './messages.js';
import { parseToolArguments } from './tool-arguments.js';
import { toToolSpec, validateToolArgs, type Tool } from './tool.js';
import { repairToolResults } from './tool-history.js';
import { runWithConcurrency } from './concurrency.js';
import { costUsd, type PriceTable } from './pricing.js';

export interface ToolResult {
  content: string;
  isError: boolean;
  durationMs: number;
}

export interface AgentHooks {
  /** May return a transformed copy; it shapes this request only and is not written to history. */
  beforeLlm?(messages: ChatMessage[]): ChatMessage[] | void | Promise<ChatMessage[] | void>;
  afterLlm?(result: LlmResult): void | Promise<void>;
  beforeTool?(call: ToolCall): void | Promise<void>;
  afterTool?(call: ToolCall, result: ToolResult): void | Promise<void>;
}

export type AgentEvent =
  | { type: 'delta'; text: string; iteration: number }
  | { type: 'tool_start'; call: ToolCall; iteration: number }
  | { type: 'tool_end'; call: ToolCall; result: ToolResult; iteration: number };

export interface AgentBudget {
  maxTokens?: number;
  maxCostUsd?: number;
}

export interface AgentTurnOptions {
  provider: LlmProvider;
  systemPrompt?: string;
  /** Conversation so far (no system message); not mutated. */
  messages: ChatMessage[];
  // Tools are heterogeneous in their argument types; `any` keeps Tool<S> assignable here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools?: Tool<any>[];
  maxIterations?: number;
  toolConcurrency?: number;
  toolTimeoutMs?: number;
  /** A single hook set or several, run in array order. */
  hooks?: AgentHooks | AgentHooks[];
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /** Defaults to streaming when `onEvent` is given, since only then is anyone watching deltas. */
  stream?: boolean;
  prices?: PriceTable;
  budget?: AgentBudget;
  /** How many times an empty reply is answered with a nudge before giving up. */
  maxEmptyRetries?: number;
}

export type StopReason = 'completed' | 'max_iterations' | 'budget';

export interface AgentTurnResult {
  stopReason: StopReason;
  /** Messages produced during this turn, to append to the conversation. */
  newMessages: ChatMessage[];
  /** Text of the last assistant message ('' when the turn did not end with an answer). */
  text: string;
  usage: Usage & { totalTokens: number };
  /** Undefined when the model has no entry in the price table. */
  costUsd: number | undefined;
  iterations: number;
}

export const EMPTY_REPLY_NUDGE =
  'Your previous reply was empty. Please answer the last message, or call a tool if you need one.';

export async function runAgentTurn(options: AgentTurnOptions): Promise<AgentTurnResult> {
  const {
    provider,
    tools = [],
    maxIterations = 10,
    toolConcurrency = 4,
    toolTimeoutMs = 30_000,
    signal,
    onEvent,
    prices,
    budget,
    maxEmptyRetries = 2,
  } = options;
  const hooks = options.hooks === undefined ? [] : Array.isArray(options.hooks) ? options.hooks : [options.hooks];
  const streaming = options.stream ?? onEvent !== undefined;
  if (budget?.maxCostUsd !== undefined && !prices?.[provider.model]) {
    // A cost budget that silently never triggers is worse than refusing to start.
    throw new Error(`Cost budget set but no price for model '${provider.model}'`);
  }
  const toolsByName = new Map(tools.map((t) => [t.name, t]));
  const toolSpecs = tools.map(toToolSpec);
  const newMessages: ChatMessage[] = [];
  const usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const cost = () => (prices ? costUsd(prices, provider.model, usage) : undefined);
  const result = (stopReason: StopReason, iterations: number): AgentTurnResult => {
    const last = newMessages.at(-1);
    const text = last?.role === 'assistant' && last.toolCalls.length === 0 ? (last.content ?? '') : '';
    return { stopReason, newMessages, text, usage: { ...usage }, costUsd: cost(), iterations };
  };
  const overBudget = () =>
    (budget?.maxTokens !== undefined && usage.totalTokens >= budget.maxTokens) ||
    (budget?.maxCostUsd !== undefined && (cost() ?? 0) >= budget.maxCostUsd);

  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    throwIfAborted(signal);
    let reply: LlmResult | undefined;
    for (let emptyAttempt = 0; ; emptyAttempt++) {
      const history: ChatMessage[] = [
        ...(options.systemPrompt ? [{ role: 'system' as const, content: options.systemPrompt }] : []),
        ...repairToolResults([...options.messages, ...newMessages]),
        // The nudge lives only in the retried request; history keeps the real conversation.
        ...(emptyAttempt > 0 ? [{ role: 'user' as const, content: EMPTY_REPLY_NUDGE }] : []),
      ];
      let request = history;
      for (const hook of hooks) request = (await hook.beforeLlm?.(request)) ?? request;
      reply = streaming
        ? await provider.stream({
            messages: request,
            tools: toolSpecs,
            signal,
            onDelta: (text) => onEvent?.({ type: 'delta', text, iteration }),
          })
        : await provider.complete({ messages: request, tools: toolSpecs, signal });
      usage.promptTokens += reply.usage.promptTokens;
      usage.completionTokens += reply.usage.completionTokens;
      usage.totalTokens = usage.promptTokens + usage.completionTokens;
      for (const hook of hooks) await hook.afterLlm?.(reply);
      if (!isEmpty(reply.message)) break;
      if (emptyAttempt >= maxEmptyRetries) {
        throw new EmptyReplyError(`Model returned an empty reply ${emptyAttempt + 1} times in a row`);
      }
      if (overBudget()) return result('budget', iteration);
    }

    const message = normalizeToolCalls(reply.message);
    newMessages.push(message);
    if (message.toolCalls.length === 0) return result('completed', iteration);

    if (overBudget()) {
      // Keep history valid for the next turn: every call needs a result, even one never run.
      for (const call of message.toolCalls) {
        newMessages.push(toolMessage(call, { content: 'Error: not executed, the turn budget was exhausted', isError: true, durationMs: 0 }));
      }
      return result('budget', iteration);
    }

    const results = await runWithConcurrency(message.toolCalls, toolConcurrency, (call) =>
      runTool(call, { toolsByName, toolTimeoutMs, signal, hooks, onEvent, iteration }),
    );
    throwIfAborted(signal);
    message.toolCalls.forEach((call, i) => newMessages.push(toolMessage(call, results[i]!)));
  }
  return result('max_iterations', maxIterations);
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

function toolMessage(call: ToolCall, result: Omit<ToolResult, 'durationMs'> & Partial<ToolResult>): ToolMessage {
  return { role: 'tool', toolCallId: call.id, content: result.content, ...(result.isError ? { isError: true } : {}) };
}

interface ToolRunContext {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  toolsByName: Map<string, Tool<any>>;
  toolTimeoutMs: number;
  signal: AbortSignal | undefined;
  hooks: AgentHooks[];
  onEvent: ((event: AgentEvent) => void) | undefined;
  iteration: number;
}

async function runTool(call: ToolCall, ctx: ToolRunContext): Promise<ToolResult> {
  const started = Date.now();
  ctx.onEvent?.({ type: 'tool_start', call, iteration: ctx.iteration });
  for (const hook of ctx.hooks) await hook.beforeTool?.(call);
  const outcome = await executeTool(call, ctx);
  const result: ToolResult = { ...outcome, durationMs: Date.now() - started };
  for (const hook of ctx.hooks) await hook.afterTool?.(call, result);
  ctx.onEvent?.({ type: 'tool_end', call, result, iteration: ctx.iteration });
  return result;
}

/** Every failure becomes a result the model can read and react to; only an abort escapes. */
async function executeTool(call: ToolCall, ctx: ToolRunContext): Promise<Omit<ToolResult, 'durationMs'>> {
  const fail = (content: string) => ({ content: `Error: ${content}`, isError: true });
  const tool = ctx.toolsByName.get(call.name);
  if (!tool) {
    const names = [...ctx.toolsByName.keys()].join(', ') || 'none';
    return fail(`unknown tool '${call.name}'. Available tools: ${names}`);
  }
  const parsed = parseToolArguments(call.arguments);
  if (!parsed.ok) return fail(parsed.error);
  const args = validateToolArgs(tool, parsed.value);
  if (!args.ok) return fail(args.error);

  const controller = new AbortController();
  const onAbort = () => controller.abort(ctx.signal?.reason);
  if (ctx.signal?.aborted) onAbort();
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ctx.toolTimeoutMs);
  });
  const aborted = new Promise<'aborted'>((resolve) => {
    if (controller.signal.aborted) resolve('aborted');
    controller.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  try {
    const run = Promise.resolve().then(() => tool.execute(args.value, { signal: controller.signal, toolCallId: call.id }));
    // A tool that ignores its signal must not hold the turn hostage, so we race rather than await.
    const outcome = await Promise.race([run.then((value) => ({ value })), timedOut, aborted]);
    if (outcome === 'timeout') {
      controller.abort(new Error('tool timed out'));
      return fail(`tool '${call.name}' timed out after ${ctx.toolTimeoutMs} ms`);
    }
    if (outcome === 'aborted') return fail(`tool '${call.name}' was aborted`);
    const value = outcome.value;
    return { content: typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), isError: false };
  } catch (e) {
    return fail(`tool '${call.name}' failed: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    clearTimeout(timer);
    ctx.signal?.removeEventListener('abort', onAbort);
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError('Agent turn aborted', { cause: signal.reason });
}
