import type { AgentBudget, AgentTurnResult, AgentTurnState, PendingCalls } from './agent-types.js';
import { AbortedError } from './llm-errors.js';
import type { ToolCall, ToolMessage } from './messages.js';
import { costUsd, type PriceTable } from './pricing.js';
import { toolMessage } from './tool-execution.js';

/** How a turn ends, besides an error: its budget, and the result it ends with whatever the reason. */
export interface TurnStops {
  /** Undefined when the model has no entry in the price table. */
  cost(): number | undefined;
  /** Whether the tokens or the cost spent so far reach the budget. */
  overBudget(): boolean;
  result(stopReason: AgentTurnResult['stopReason'], pending?: PendingCalls): AgentTurnResult;
}

export function createTurnStops(options: { model: string; prices: PriceTable | undefined; budget: AgentBudget | undefined; state: AgentTurnState }): TurnStops {
  const { model, prices, budget, state } = options;
  if (budget?.maxCostUsd !== undefined && !prices?.[model]) {
    // A cost budget that silently never triggers is worse than refusing to start.
    throw new Error(`Cost budget set but no price for model '${model}'`);
  }
  const { newMessages, usage } = state;
  const cost = () => (prices ? costUsd(prices, model, usage) : undefined);
  return {
    cost,
    overBudget: () => {
      const extra = budget?.extraSpend?.();
      const tokens = usage.totalTokens + (extra?.totalTokens ?? 0);
      const dollars = (cost() ?? 0) + (extra?.costUsd ?? 0);
      return (budget?.maxTokens !== undefined && tokens >= budget.maxTokens) || (budget?.maxCostUsd !== undefined && dollars >= budget.maxCostUsd);
    },
    result(stopReason, pending) {
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
    },
  };
}

/** Results for calls the budget stopped: history stays valid for the next turn, since every call needs a result, even one never run. */
export function budgetExhaustedResults(calls: readonly ToolCall[]): ToolMessage[] {
  return calls.map((call) => toolMessage(call, { content: 'Error: not executed, the turn budget was exhausted', isError: true }));
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError('Agent turn aborted', { cause: signal.reason });
}
