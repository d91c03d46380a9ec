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
import { DEFAULT_MAX_CONTINUATIONS } from './continuation.js';
import { callModel, keepReasoning } from './model-call.js';
import { createTextCallReader } from './text-call-reply.js';
import { createToolDispatch } from './tool-dispatch.js';
import { budgetExhaustedResults, createTurnStops, throwIfAborted } from './turn-stop-rules.js';
import { closeSteering, joinSteering, nothingPending } from './turn-steering.js';

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
    let result: AgentTurnResult;
    try {
      result = await runTurn(options);
    } catch (error) {
      options.steering?.close();
      throw error;
    }
    if (options.steering && result.stopReason !== 'paused') closeSteering(options.steering, result.newMessages, result.iterations, options.onEvent);
    if (result.state.reasoning !== undefined) result.reasoning = result.state.reasoning;
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
  const { provider, maxIterations = 10, signal, onEvent, steering } = options;
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
    deferredTools: options.deferredTools,
    maxResultChars: options.maxToolResultChars,
    maxConsecutiveErrors: options.maxConsecutiveToolErrors,
    signal,
    hooks,
    onEvent,
    state,
  });
  const streaming = options.stream ?? onEvent !== undefined;
  // Calls a model wrote as text run as native ones; their text is held back from the stream. Only
  // a stream has deltas to hold: a reply not streamed has its events go straight to the listener.
  const textCalls = createTextCallReader(options.textToolCalls ?? true, streaming ? onEvent : undefined, (name) => dispatch.offers(name));

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
    // A step boundary, the tool results in flight in: a pause asked for stops here; steering joins here.
    if (steering) {
      if (steering.pauseRequested()) return stops.result('paused', nothingPending());
      joinSteering(steering, newMessages, iteration, onEvent);
      // The last call the limit allows: a message sent during it could not be answered, so it is refused.
      if (iteration >= maxIterations) steering.close();
    }
    state.iterations = iteration;
    const replied = await callModel({
      provider,
      systemPrompt: options.systemPrompt,
      messages: options.messages,
      newMessages,
      tools: dispatch.visibleSpecs(),
      hooks,
      streaming,
      signal,
      onEvent: streaming ? textCalls.onEvent : onEvent,
      iteration,
      usage: state.usage,
      maxEmptyRetries: options.maxEmptyRetries ?? 2,
      overBudget: stops.overBudget,
      callOptions: options.callOptions,
      maxContinuations: options.maxContinuations ?? DEFAULT_MAX_CONTINUATIONS,
    });
    if (!replied) return stops.result('budget');
    if (replied.reasoning) keepReasoning(state, replied.reasoning);
    const message = textCalls.read(replied.message);
    newMessages.push(message);
    if (message.toolCalls.length === 0) {
      // Steering that came during this call is answered by another one.
      if (iteration >= maxIterations || (steering?.finish() ?? true)) return stops.result(replied.truncated ? 'max_tokens' : 'completed');
      continue;
    }
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
