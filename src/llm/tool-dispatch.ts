import type { AgentEvent, AgentHooks, AgentTurnOptions, AgentTurnState, ClientTool, PendingCalls, ToolResult } from './agent-types.js';
import { runWithConcurrency } from './concurrency.js';
import type { AssistantMessage, ChatMessage, ToolCall, ToolMessage, ToolSpec } from './messages.js';
import { parseToolArguments } from './tool-arguments.js';
import { type ToolRunContext, runTool, toolMessage } from './tool-execution.js';
import { type ToolBreaker, createToolBreaker, withdrawnResult } from './tool-breaker.js';
import { limitToolResult } from './tool-result-limit.js';
import { TOOL_SEARCH_NAME, TOOL_SEARCH_SPEC, searchTools } from './tool-search.js';
import { toToolSpec } from './tool.js';

export function deniedResult(reason: string | undefined): string {
  return `Error: a person denied this call${reason ? `: ${reason}` : ''}. Do not call it again unless the user asks.`;
}

/** Where each call of the model goes: the loop's own tools, the tool search, the client, or a person's approval. */
export interface ToolDispatch {
  /**
   * The specs advertised to the model: all, or with deferred tools `tool_search`, the tools not
   * deferred and those it found; never a tool withdrawn after repeated errors.
   */
  visibleSpecs(): ToolSpec[];
  /** Whether a call of this tool written as text may run: a tool the model is shown now, or a client tool. */
  offers(name: string): boolean;
  /** Calls of the last assistant message that have no result yet, approvals first. */
  pendingCalls(newMessages: readonly ChatMessage[]): PendingCalls | undefined;
  /**
   * Answers the calls of a reply the loop answers now (its own tools, the tool search, client calls
   * with wrong arguments), leaving those that wait for the client or a person; results in call order.
   */
  answerNow(message: AssistantMessage, iteration: number): Promise<ToolMessage[]>;
  /** Settles the calls a paused turn waits on with the client's outputs and the decisions given; results in call order. */
  settleResumed(resume: NonNullable<AgentTurnOptions['resume']>, newMessages: readonly ChatMessage[], iteration: number): Promise<ToolMessage[]>;
}

export interface ToolDispatchOptions {
  tools: AgentTurnOptions['tools'] & {};
  clientTools: ClientTool[];
  needsApproval: AgentTurnOptions['needsApproval'];
  toolSearchThreshold: number | undefined;
  toolConcurrency: number;
  toolTimeoutMs: number;
  /** Built-in tools kept behind `tool_search` whatever the count (client tools say so themselves: `deferred`). */
  deferredTools?: readonly string[];
  /** Characters of a result sent to the model at most; the rest is replaced by a note. */
  maxResultChars?: number;
  /** Consecutive errors of one tool after which it is withdrawn for the rest of the turn. */
  maxConsecutiveErrors?: number;
  signal: AbortSignal | undefined;
  hooks: AgentHooks[];
  onEvent: ((event: AgentEvent) => void) | undefined;
  /** The turn's state: tools the search promotes are recorded in its `promoted`. */
  state: AgentTurnState;
}

export function createToolDispatch(options: ToolDispatchOptions): ToolDispatch {
  return new Dispatch(options);
}

/**
 * A class, not closures: what a turn builds once costs nothing per method, so a turn that uses
 * none of deferral, the breaker or client tools pays for none of them (issue 55's overhead measure).
 */
class Dispatch implements ToolDispatch {
  private readonly toolsByName: ToolRunContext['toolsByName'];
  private readonly clientByName: Map<string, ClientTool>;
  private readonly allSpecs: ToolSpec[];
  private readonly deferAll: boolean;
  private readonly deferredNames: Set<string> | undefined;
  private readonly searching: boolean;
  private readonly promoted: Set<string>;
  private readonly breaker: ToolBreaker;

  constructor(private readonly options: ToolDispatchOptions) {
    const { tools, clientTools, state } = options;
    this.toolsByName = new Map(tools.map((t) => [t.name, t]));
    this.clientByName = new Map(clientTools.map((t) => [t.name, t]));
    this.allSpecs = [...tools.map(toToolSpec), ...clientTools.map(({ validate: _v, deferred: _d, ...spec }) => spec)];
    this.deferAll = options.toolSearchThreshold !== undefined && this.allSpecs.length > options.toolSearchThreshold;
    this.deferredNames = deferredToolNames(options.deferredTools, clientTools);
    this.searching = (this.deferAll || this.deferredNames !== undefined) && this.allSpecs.some((spec) => this.isDeferred(spec.name));
    this.promoted = new Set(state.promoted);
    this.breaker = createToolBreaker(state, options.maxConsecutiveErrors);
  }

  private isDeferred(name: string): boolean {
    return this.deferAll || (this.deferredNames?.has(name) ?? false);
  }

  private promote(name: string): void {
    if (!this.promoted.has(name)) this.options.state.promoted.push(name);
    this.promoted.add(name);
  }

  private runContext(iteration: number): ToolRunContext {
    const { toolTimeoutMs, maxResultChars, signal, hooks, onEvent } = this.options;
    return { toolsByName: this.toolsByName, toolTimeoutMs, maxResultChars, signal, hooks, onEvent, iteration };
  }

  private shown(spec: ToolSpec): boolean {
    return !this.breaker.isWithdrawn(spec.name) && (!this.isDeferred(spec.name) || this.promoted.has(spec.name));
  }

  visibleSpecs(): ToolSpec[] {
    if (this.searching) return [TOOL_SEARCH_SPEC, ...this.allSpecs.filter((spec) => this.shown(spec))];
    // Nothing deferred and nothing withdrawn (the usual turn): every spec, as it is.
    return this.breaker.anyWithdrawn() ? this.allSpecs.filter((spec) => this.shown(spec)) : this.allSpecs;
  }

  offers(name: string): boolean {
    return (this.clientByName.has(name) && !this.breaker.isWithdrawn(name)) || this.visibleSpecs().some((spec) => spec.name === name);
  }

  private searchTool(call: ToolCall): Omit<ToolResult, 'durationMs'> {
    const parsed = parseToolArguments(call.arguments);
    const query = parsed.ok && typeof (parsed.value as { query?: unknown })?.query === 'string' ? (parsed.value as { query: string }).query : '';
    if (query.trim() === '') return { content: 'Error: tool_search needs {"query": "what the tool should do"}', isError: true };
    const found = searchTools(
      query,
      this.allSpecs.filter((spec) => this.isDeferred(spec.name) && !this.breaker.isWithdrawn(spec.name)),
    );
    for (const spec of found) this.promote(spec.name);
    return { content: JSON.stringify(found.length > 0 ? { tools: found } : { tools: [], note: 'no tool matches; try other words' }), isError: false };
  }

  /** Where a call goes, withdrawal aside: a paused call keeps the kind it paused as. */
  private kindOf(call: ToolCall): 'search' | 'client' | 'approval' | 'run' {
    if (this.searching && call.name === TOOL_SEARCH_NAME && !this.toolsByName.has(call.name)) return 'search';
    if (this.clientByName.has(call.name)) return 'client';
    if (this.toolsByName.has(call.name) && this.options.needsApproval?.(call)) return 'approval';
    return 'run';
  }

  private classify(call: ToolCall): 'withdrawn' | 'search' | 'client' | 'approval' | 'run' {
    return this.breaker.isWithdrawn(call.name) ? 'withdrawn' : this.kindOf(call);
  }

  pendingCalls(newMessages: readonly ChatMessage[]): PendingCalls | undefined {
    const at = newMessages.findLastIndex((m) => m.role === 'assistant');
    const lastAssistant = newMessages[at] as AssistantMessage | undefined;
    if (!lastAssistant || lastAssistant.toolCalls.length === 0) return undefined;
    // Only the results after it: some servers reuse call ids ("call_0") from one reply to the next.
    const answered = new Set(newMessages.slice(at + 1).flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
    const open = lastAssistant.toolCalls.filter((c) => !answered.has(c.id));
    if (open.length === 0) return undefined;
    const approvals = open.filter((c) => this.kindOf(c) === 'approval');
    return { approvals, clientCalls: open.filter((c) => !approvals.includes(c)) };
  }

  async answerNow(message: AssistantMessage, iteration: number): Promise<ToolMessage[]> {
    const { clientByName, breaker } = this;
    const calls = message.toolCalls.filter((call) => {
      const kind = this.classify(call);
      if (kind === 'client') return clientArgumentsError(clientByName.get(call.name)!, call) !== undefined;
      return kind !== 'approval';
    });
    const kinds = calls.map((call) => this.classify(call));
    const results = await runWithConcurrency(calls, this.options.toolConcurrency, async (call, i) => {
      const kind = kinds[i];
      if (kind === 'withdrawn') return { content: withdrawnResult(call.name), isError: true, durationMs: 0 };
      if (kind === 'search') return { ...this.searchTool(call), durationMs: 0 };
      if (kind === 'client') return { content: clientArgumentsError(clientByName.get(call.name)!, call)!, isError: true, durationMs: 0 };
      // A tool the model found without searching is as good as promoted.
      if (this.isDeferred(call.name)) this.promote(call.name);
      return runTool(call, this.runContext(iteration));
    });
    // Counted in the order of the calls, so that which call trips the breaker does not depend on timing.
    return calls.map((call, i) => toolMessage(call, kinds[i] === 'withdrawn' || kinds[i] === 'search' ? results[i]! : breaker.record(call.name, results[i]!)));
  }

  async settleResumed(resume: NonNullable<AgentTurnOptions['resume']>, newMessages: readonly ChatMessage[], iteration: number): Promise<ToolMessage[]> {
    const { onEvent, maxResultChars, toolConcurrency } = this.options;
    const open = this.pendingCalls(newMessages);
    // Answered in the order the model made the calls, whatever order they are settled in.
    const settled = new Map<string, ToolResult>();
    const toRun: ToolCall[] = [];
    for (const call of open?.approvals ?? []) {
      const decision = resume.decisions?.get(call.id);
      if (!decision) continue;
      if (decision.approve) {
        toRun.push(call);
        continue;
      }
      settled.set(call.id, { content: deniedResult(decision.reason), isError: true, durationMs: 0 });
    }
    for (const call of open?.clientCalls ?? []) {
      const output = resume.outputs?.get(call.id);
      if (output !== undefined) settled.set(call.id, { content: limitToolResult(output, maxResultChars), isError: false, durationMs: 0 });
    }
    for (const call of [...(open?.approvals ?? []), ...(open?.clientCalls ?? [])]) {
      const done = settled.get(call.id);
      if (!done) continue;
      // Reported like a run of the tool, so a client sees every call of the turn the same way.
      onEvent?.({ type: 'tool_start', call, iteration });
      onEvent?.({ type: 'tool_end', call, result: done, iteration });
    }
    const results = await runWithConcurrency(toRun, toolConcurrency, (call) => runTool(call, this.runContext(iteration)));
    toRun.forEach((call, i) => settled.set(call.id, results[i]!));
    const denied = new Set([...(open?.approvals ?? [])].filter((call) => resume.decisions?.get(call.id)?.approve === false).map((call) => call.id));
    const lastAssistant = newMessages.findLast((m): m is AssistantMessage => m.role === 'assistant');
    return (lastAssistant?.toolCalls ?? []).flatMap((call) => {
      const done = settled.get(call.id);
      if (!done) return [];
      // A person's refusal is no fault of the tool's: it leaves the breaker's count as it was.
      return [toolMessage(call, denied.has(call.id) ? done : this.breaker.record(call.name, done))];
    });
  }
}

/** The tools deferred by name; undefined when none is. */
function deferredToolNames(deferredTools: readonly string[] | undefined, clientTools: readonly ClientTool[]): Set<string> | undefined {
  let names: Set<string> | undefined = deferredTools?.length ? new Set(deferredTools) : undefined;
  for (const tool of clientTools) if (tool.deferred) (names ??= new Set()).add(tool.name);
  return names;
}

function clientArgumentsError(tool: ClientTool, call: ToolCall): string | undefined {
  const parsed = parseToolArguments(call.arguments);
  if (!parsed.ok) return `Error: ${parsed.error}`;
  const problem = tool.validate?.(parsed.value);
  return problem === undefined ? undefined : `Error: invalid arguments for tool '${tool.name}': ${problem}`;
}
