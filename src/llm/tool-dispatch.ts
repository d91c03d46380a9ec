import type { AgentEvent, AgentHooks, AgentTurnOptions, AgentTurnState, ClientTool, PendingCalls, ToolResult } from './agent-types.js';
import { runWithConcurrency } from './concurrency.js';
import type { AssistantMessage, ChatMessage, ToolCall, ToolMessage, ToolSpec } from './messages.js';
import { parseToolArguments } from './tool-arguments.js';
import { type ToolRunContext, runTool, toolMessage } from './tool-execution.js';
import { TOOL_SEARCH_NAME, TOOL_SEARCH_SPEC, searchTools } from './tool-search.js';
import { toToolSpec } from './tool.js';

export function deniedResult(reason: string | undefined): string {
  return `Error: a person denied this call${reason ? `: ${reason}` : ''}. Do not call it again unless the user asks.`;
}

/** Where each call of the model goes: the loop's own tools, the tool search, the client, or a person's approval. */
export interface ToolDispatch {
  /** The specs advertised to the model: all, or with deferred tools `tool_search` and the tools it found. */
  visibleSpecs(): ToolSpec[];
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
  signal: AbortSignal | undefined;
  hooks: AgentHooks[];
  onEvent: ((event: AgentEvent) => void) | undefined;
  /** The turn's state: tools the search promotes are recorded in its `promoted`. */
  state: AgentTurnState;
}

export function createToolDispatch(options: ToolDispatchOptions): ToolDispatch {
  const { tools, clientTools, toolConcurrency, toolTimeoutMs, signal, hooks, onEvent, state } = options;
  const toolsByName = new Map(tools.map((t) => [t.name, t]));
  const clientByName = new Map(clientTools.map((t) => [t.name, t]));
  const allSpecs: ToolSpec[] = [...tools.map(toToolSpec), ...clientTools.map(({ validate: _v, ...spec }) => spec)];
  const deferred = options.toolSearchThreshold !== undefined && allSpecs.length > options.toolSearchThreshold;
  const promoted = new Set(state.promoted);
  const promote = (name: string) => {
    if (!promoted.has(name)) state.promoted.push(name);
    promoted.add(name);
  };
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
  const pendingCalls = (newMessages: readonly ChatMessage[]): PendingCalls | undefined => {
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

  return {
    visibleSpecs: () => (deferred ? [TOOL_SEARCH_SPEC, ...allSpecs.filter((s) => promoted.has(s.name))] : allSpecs),
    pendingCalls,

    async answerNow(message, iteration) {
      const calls = message.toolCalls.filter((call) => {
        const kind = classify(call);
        if (kind === 'client') return clientArgumentsError(clientByName.get(call.name)!, call) !== undefined;
        return kind !== 'approval';
      });
      const results = await runWithConcurrency(calls, toolConcurrency, async (call) => {
        const kind = classify(call);
        if (kind === 'search') return { ...searchTool(call), durationMs: 0 };
        if (kind === 'client') return { content: clientArgumentsError(clientByName.get(call.name)!, call)!, isError: true, durationMs: 0 };
        // A tool the model found without searching is as good as promoted.
        if (deferred) promote(call.name);
        return runTool(call, runContext(iteration));
      });
      return calls.map((call, i) => toolMessage(call, results[i]!));
    },

    async settleResumed(resume, newMessages, iteration) {
      const open = pendingCalls(newMessages);
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
      toRun.forEach((call, i) => settled.set(call.id, results[i]!));
      const lastAssistant = newMessages.findLast((m): m is AssistantMessage => m.role === 'assistant');
      return (lastAssistant?.toolCalls ?? []).flatMap((call) => {
        const done = settled.get(call.id);
        return done ? [toolMessage(call, done)] : [];
      });
    },
  };
}

function clientArgumentsError(tool: ClientTool, call: ToolCall): string | undefined {
  const parsed = parseToolArguments(call.arguments);
  if (!parsed.ok) return `Error: ${parsed.error}`;
  const problem = tool.validate?.(parsed.value);
  return problem === undefined ? undefined : `Error: invalid arguments for tool '${tool.name}': ${problem}`;
}
