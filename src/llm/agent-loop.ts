import { AbortedError, EmptyReplyError } from './llm-errors.js';
import type { LlmProvider, LlmResult } from './llm-provider.js';
import type { AssistantMessage, ChatMessage, ToolCall, ToolMessage, ToolSpec, Usage } from './messages.js';
import { parseToolArguments } from './tool-arguments.js';
import { toToolSpec, validateToolArgs, type Tool } from './tool.js';
import { repairToolResults } from './tool-history.js';
import { runWithConcurrency } from './concurrency.js';
import { costUsd, type PriceTable } from './pricing.js';
import { TOOL_SEARCH_NAME, TOOL_SEARCH_SPEC, searchTools } from './tool-search.js';
import { SpanStatusCode } from '@opentelemetry/api';
import { withSpan } from '../util/spans.js';
import {
  GEN_AI_OPERATION,
  GEN_AI_OPERATION_NAME,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_TOOL_CALL_ID,
  GEN_AI_TOOL_NAME,
  GEN_AI_TOOL_TYPE,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  MEMRAG_COST_USD,
} from './gen-ai-attributes.js';

export interface ToolResult {
  content: string;
  isError: boolean;
  durationMs: number;
}

export interface AgentHooks {
  /** May return a transformed copy; it shapes this request only and is not written to history. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (void) leaves the messages as they are.
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

/** A tool the client runs: advertised to the model, and a call to it pauses the turn. */
export interface ClientTool extends ToolSpec {
  /** Checks the model's arguments; an error message sends the call back to the model instead of pausing. */
  validate?(args: unknown): string | undefined;
}

/** A person's answer to a call waiting for approval. */
export interface ApprovalDecision {
  approve: boolean;
  reason?: string;
}

/** Where a paused turn stands: what it resumes from. Plain JSON, so it can be stored. */
export interface AgentTurnState {
  /** Messages produced so far this turn; the last assistant message has calls without results. */
  newMessages: ChatMessage[];
  usage: Usage & { totalTokens: number };
  /** Model calls made so far. */
  iterations: number;
  /** Tools the tool search made visible; they stay visible for the rest of the turn. */
  promoted: string[];
}

export interface AgentTurnOptions {
  provider: LlmProvider;
  systemPrompt?: string;
  /** Conversation so far (no system message); not mutated. */
  messages: ChatMessage[];
  // biome-ignore lint/suspicious/noExplicitAny: tools are heterogeneous in their argument types; `any` keeps Tool<S> assignable here.
  tools?: Tool<any>[];
  /** Run by the client: a call to one pauses the turn until its output is given back (`resume`). */
  clientTools?: ClientTool[];
  /** Calls to these tools wait for a person's decision: the turn pauses before running them. */
  needsApproval?: (call: ToolCall) => boolean;
  /** With more tools than this, only `tool_search` and the tools it found are advertised. */
  toolSearchThreshold?: number;
  /** Continues a paused turn, with the client's tool outputs and the approval decisions, by call id. */
  resume?: {
    state: AgentTurnState;
    outputs?: ReadonlyMap<string, string>;
    decisions?: ReadonlyMap<string, ApprovalDecision>;
  };
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

/** Calls the turn waits on: approvals first, then the client's tools. */
export interface PendingCalls {
  approvals: ToolCall[];
  clientCalls: ToolCall[];
}

export interface AgentTurnResult {
  /** `paused` when calls wait for the client or a person (`pending`); resume with `state`. */
  stopReason: StopReason | 'paused';
  /** Messages produced during this turn, to append to the conversation. */
  newMessages: ChatMessage[];
  /** Text of the last assistant message ('' when the turn did not end with an answer). */
  text: string;
  usage: Usage & { totalTokens: number };
  /** Undefined when the model has no entry in the price table. */
  costUsd: number | undefined;
  iterations: number;
  pending?: PendingCalls;
  /** What a paused turn resumes from. */
  state: AgentTurnState;
}

export const EMPTY_REPLY_NUDGE = 'Your previous reply was empty. Please answer the last message, or call a tool if you need one.';

export function deniedResult(reason: string | undefined): string {
  return `Error: a person denied this call${reason ? `: ${reason}` : ''}. Do not call it again unless the user asks.`;
}

/**
 * Runs (or resumes) a turn: model calls and tool calls until an answer, a pause, or a limit. Traced
 * as an `invoke_agent` span whose children are the model calls (their provider's spans) and the
 * tool calls (`execute_tool <name>`).
 */
export async function runAgentTurn(options: AgentTurnOptions): Promise<AgentTurnResult> {
  const attributes = { [GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION.invokeAgent, [GEN_AI_REQUEST_MODEL]: options.provider.model };
  return withSpan(GEN_AI_OPERATION.invokeAgent, attributes, async (span) => {
    const result = await runTurn(options);
    if (span.isRecording()) {
      span.setAttributes({
        [GEN_AI_USAGE_INPUT_TOKENS]: result.usage.promptTokens,
        [GEN_AI_USAGE_OUTPUT_TOKENS]: result.usage.completionTokens,
        'memrag.agent.iterations': result.iterations,
        'memrag.agent.stop_reason': result.stopReason,
        ...(result.costUsd !== undefined ? { [MEMRAG_COST_USD]: result.costUsd } : {}),
      });
    }
    return result;
  });
}

async function runTurn(options: AgentTurnOptions): Promise<AgentTurnResult> {
  const {
    provider,
    tools = [],
    clientTools = [],
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
  const clientByName = new Map(clientTools.map((t) => [t.name, t]));
  const allSpecs: ToolSpec[] = [...tools.map(toToolSpec), ...clientTools.map(({ validate: _v, ...spec }) => spec)];
  const deferred = options.toolSearchThreshold !== undefined && allSpecs.length > options.toolSearchThreshold;
  const state: AgentTurnState = options.resume
    ? structuredClone(options.resume.state)
    : { newMessages: [], usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, iterations: 0, promoted: [] };
  const { newMessages, usage } = state;
  const promoted = new Set(state.promoted);
  const promote = (name: string) => {
    if (!promoted.has(name)) state.promoted.push(name);
    promoted.add(name);
  };
  const visibleSpecs = (): ToolSpec[] => (deferred ? [TOOL_SEARCH_SPEC, ...allSpecs.filter((s) => promoted.has(s.name))] : allSpecs);
  const cost = () => (prices ? costUsd(prices, provider.model, usage) : undefined);
  const result = (stopReason: AgentTurnResult['stopReason'], pending?: PendingCalls): AgentTurnResult => {
    const last = newMessages.at(-1);
    const text = last?.role === 'assistant' && last.toolCalls.length === 0 ? (last.content ?? '') : '';
    return {
      stopReason,
      newMessages,
      text,
      usage: { ...usage },
      costUsd: cost(),
      iterations: state.iterations,
      ...(pending ? { pending } : {}),
      state,
    };
  };
  const overBudget = () =>
    (budget?.maxTokens !== undefined && usage.totalTokens >= budget.maxTokens) || (budget?.maxCostUsd !== undefined && (cost() ?? 0) >= budget.maxCostUsd);
  const runContext = (iteration: number): ToolRunContext => ({ toolsByName, toolTimeoutMs, signal, hooks, onEvent, iteration });
  const searchTool = (call: ToolCall): Omit<ToolResult, 'durationMs'> => {
    const parsed = parseToolArguments(call.arguments);
    const query = parsed.ok && typeof (parsed.value as { query?: unknown })?.query === 'string' ? (parsed.value as { query: string }).query : '';
    if (query.trim() === '') return { content: 'Error: tool_search needs {"query": "what the tool should do"}', isError: true };
    const found = searchTools(query, allSpecs);
    for (const spec of found) promote(spec.name);
    return { content: JSON.stringify(found.length > 0 ? { tools: found } : { tools: [], note: 'no tool matches; try other words' }), isError: false };
  };
  const classify = (call: ToolCall): 'search' | 'client' | 'approval' | 'run' => {
    if (deferred && call.name === TOOL_SEARCH_NAME && !toolsByName.has(call.name)) return 'search';
    if (clientByName.has(call.name)) return 'client';
    if (toolsByName.has(call.name) && options.needsApproval?.(call)) return 'approval';
    return 'run';
  };
  /** Calls of the last assistant message that have no result yet, approvals first. */
  const pendingCalls = (): PendingCalls | undefined => {
    const at = newMessages.findLastIndex((m) => m.role === 'assistant');
    const lastAssistant = newMessages[at] as AssistantMessage | undefined;
    if (!lastAssistant || lastAssistant.toolCalls.length === 0) return undefined;
    // Only the results after it: some servers reuse call ids ("call_0") from one reply to the next.
    const answered = new Set(newMessages.slice(at + 1).flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
    const open = lastAssistant.toolCalls.filter((c) => !answered.has(c.id));
    if (open.length === 0) return undefined;
    const approvals = open.filter((c) => classify(c) === 'approval');
    return { approvals, clientCalls: open.filter((c) => !approvals.includes(c)) };
  };

  if (options.resume) {
    throwIfAborted(signal);
    const iteration = state.iterations;
    const open = pendingCalls();
    // Answered in the order the model made the calls, whatever order they are settled in.
    const settled = new Map<string, ToolResult>();
    const toRun: ToolCall[] = [];
    for (const call of open?.approvals ?? []) {
      const decision = options.resume.decisions?.get(call.id);
      if (!decision) continue;
      if (decision.approve) {
        toRun.push(call);
        continue;
      }
      settled.set(call.id, { content: deniedResult(decision.reason), isError: true, durationMs: 0 });
    }
    for (const call of open?.clientCalls ?? []) {
      const output = options.resume.outputs?.get(call.id);
      if (output !== undefined) settled.set(call.id, { content: output, isError: false, durationMs: 0 });
    }
    for (const call of [...(open?.approvals ?? []), ...(open?.clientCalls ?? [])]) {
      const done = settled.get(call.id);
      if (!done) continue;
      // Reported like a run of the tool, so a client sees every call of the turn the same way.
      onEvent?.({ type: 'tool_start', call, iteration });
      onEvent?.({ type: 'tool_end', call, result: done, iteration });
    }
    const results = await runWithConcurrency(toRun, toolConcurrency, (call) => runTool(call, runContext(iteration)));
    throwIfAborted(signal);
    toRun.forEach((call, i) => settled.set(call.id, results[i]!));
    const lastAssistant = newMessages.findLast((m): m is AssistantMessage => m.role === 'assistant');
    for (const call of lastAssistant?.toolCalls ?? []) {
      const done = settled.get(call.id);
      if (done) newMessages.push(toolMessage(call, done));
    }
    const still = pendingCalls();
    if (still) return result('paused', still);
    if (state.iterations >= maxIterations) return result('max_iterations');
  }

  for (let iteration = state.iterations + 1; iteration <= maxIterations; iteration++) {
    throwIfAborted(signal);
    state.iterations = iteration;
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
      const toolSpecs = visibleSpecs();
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
      if (overBudget()) return result('budget');
    }

    const message = normalizeToolCalls(reply.message);
    newMessages.push(message);
    if (message.toolCalls.length === 0) return result('completed');

    if (overBudget()) {
      // Keep history valid for the next turn: every call needs a result, even one never run.
      for (const call of message.toolCalls) {
        newMessages.push(toolMessage(call, { content: 'Error: not executed, the turn budget was exhausted', isError: true, durationMs: 0 }));
      }
      return result('budget');
    }

    // Calls the loop answers now: its own tools, the tool search, and client calls whose
    // arguments are wrong (sent back to the model rather than to the client).
    const answerNow = message.toolCalls.filter((call) => {
      const kind = classify(call);
      if (kind === 'client') return clientArgumentsError(clientByName.get(call.name)!, call) !== undefined;
      return kind !== 'approval';
    });
    const results = await runWithConcurrency(answerNow, toolConcurrency, async (call) => {
      const kind = classify(call);
      if (kind === 'search') return { ...searchTool(call), durationMs: 0 };
      if (kind === 'client') return { content: clientArgumentsError(clientByName.get(call.name)!, call)!, isError: true, durationMs: 0 };
      // A tool the model found without searching is as good as promoted.
      if (deferred) promote(call.name);
      return runTool(call, runContext(iteration));
    });
    throwIfAborted(signal);
    answerNow.forEach((call, i) => newMessages.push(toolMessage(call, results[i]!)));
    const pending = pendingCalls();
    if (pending) return result('paused', pending);
  }
  return result('max_iterations');
}

function clientArgumentsError(tool: ClientTool, call: ToolCall): string | undefined {
  const parsed = parseToolArguments(call.arguments);
  if (!parsed.ok) return `Error: ${parsed.error}`;
  const problem = tool.validate?.(parsed.value);
  return problem === undefined ? undefined : `Error: invalid arguments for tool '${tool.name}': ${problem}`;
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
  // biome-ignore lint/suspicious/noExplicitAny: as `tools` above.
  toolsByName: Map<string, Tool<any>>;
  toolTimeoutMs: number;
  signal: AbortSignal | undefined;
  hooks: AgentHooks[];
  onEvent: ((event: AgentEvent) => void) | undefined;
  iteration: number;
}

/** One call of one of the loop's own tools, in an `execute_tool <name>` span (what the tool does nests under it). */
function runTool(call: ToolCall, ctx: ToolRunContext): Promise<ToolResult> {
  const attributes = {
    [GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION.executeTool,
    [GEN_AI_TOOL_NAME]: call.name,
    [GEN_AI_TOOL_CALL_ID]: call.id,
    [GEN_AI_TOOL_TYPE]: 'function',
  };
  return withSpan(`${GEN_AI_OPERATION.executeTool} ${call.name}`, attributes, async (span) => {
    const started = Date.now();
    ctx.onEvent?.({ type: 'tool_start', call, iteration: ctx.iteration });
    for (const hook of ctx.hooks) await hook.beforeTool?.(call);
    const outcome = await executeTool(call, ctx);
    const result: ToolResult = { ...outcome, durationMs: Date.now() - started };
    // A failed call is a result the model reads, not a throw: the span says it failed all the same.
    if (result.isError) {
      span.setAttribute('error.type', 'tool_error');
      // Not the result's text: it may quote the model's arguments, and spans carry no content.
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'tool_error' });
    }
    for (const hook of ctx.hooks) await hook.afterTool?.(call, result);
    ctx.onEvent?.({ type: 'tool_end', call, result, iteration: ctx.iteration });
    return result;
  });
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
