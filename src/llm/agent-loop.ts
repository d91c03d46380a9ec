import { withSpan } from '../util/spans.js';
import type { AgentTurnOptions, AgentTurnResult, AgentTurnState } from './agent-types.js';
import {
  GEN_AI_OPERATION,
  GEN_AI_OPERATION_NAME,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  MEMRAG_COST_USD,
} from './gen-ai-attributes.js';
import { callModel } from './model-call.js';
import { createToolDispatch } from './tool-dispatch.js';
import { budgetExhaustedResults, createTurnStops, throwIfAborted } from './turn-stop-rules.js';

// The turn's parts, each a file of its own: the model call (model-call.ts), where calls go and how
// they run (tool-dispatch.ts, tool-execution.ts), and how the turn ends (turn-stop-rules.ts).
export type {
  AgentBudget,
  AgentEvent,
  AgentHooks,
  AgentTurnOptions,
  AgentTurnResult,
  AgentTurnState,
  ApprovalDecision,
  ClientTool,
  PendingCalls,
  StopReason,
  ToolResult,
} from './agent-types.js';
export { EMPTY_REPLY_NUDGE } from './model-call.js';
export { deniedResult } from './tool-dispatch.js';

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
  const { provider, maxIterations = 10, signal, onEvent } = options;
  const hooks = options.hooks === undefined ? [] : Array.isArray(options.hooks) ? options.hooks : [options.hooks];
  const state: AgentTurnState = options.resume
    ? structuredClone(options.resume.state)
    : { newMessages: [], usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, iterations: 0, promoted: [] };
  const { newMessages } = state;
  const stops = createTurnStops({ model: provider.model, prices: options.prices, budget: options.budget, state });
  const dispatch = createToolDispatch({
    tools: options.tools ?? [],
    clientTools: options.clientTools ?? [],
    needsApproval: options.needsApproval,
    toolSearchThreshold: options.toolSearchThreshold,
    toolConcurrency: options.toolConcurrency ?? 4,
    toolTimeoutMs: options.toolTimeoutMs ?? 30_000,
    signal,
    hooks,
    onEvent,
    state,
  });

  if (options.resume) {
    throwIfAborted(signal);
    const settled = await dispatch.settleResumed(options.resume, newMessages, state.iterations);
    throwIfAborted(signal);
    newMessages.push(...settled);
    const still = dispatch.pendingCalls(newMessages);
    if (still) return stops.result('paused', still);
    if (state.iterations >= maxIterations) return stops.result('max_iterations');
  }

  for (let iteration = state.iterations + 1; iteration <= maxIterations; iteration++) {
    throwIfAborted(signal);
    state.iterations = iteration;
    const message = await callModel({
      provider,
      systemPrompt: options.systemPrompt,
      messages: options.messages,
      newMessages,
      tools: dispatch.visibleSpecs(),
      hooks,
      streaming: options.stream ?? onEvent !== undefined,
      signal,
      onEvent,
      iteration,
      usage: state.usage,
      maxEmptyRetries: options.maxEmptyRetries ?? 2,
      overBudget: stops.overBudget,
    });
    if (!message) return stops.result('budget');
    newMessages.push(message);
    if (message.toolCalls.length === 0) return stops.result('completed');
    if (stops.overBudget()) {
      newMessages.push(...budgetExhaustedResults(message.toolCalls));
      return stops.result('budget');
    }
    const answered = await dispatch.answerNow(message, iteration);
    throwIfAborted(signal);
    newMessages.push(...answered);
    const pending = dispatch.pendingCalls(newMessages);
    if (pending) return stops.result('paused', pending);
  }
  return stops.result('max_iterations');
}
