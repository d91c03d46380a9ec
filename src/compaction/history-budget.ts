import { type CompactionSettings, compactionLimit } from './compaction-config.js';
import type { HistoryTurn } from './conversation-turns.js';

/**
 * What a summary may cost: a share of what the history has left once the request's fixed part
 * (system prompt, tool definitions, the question with its sources) is counted, and never more
 * than a quarter of the limit. Counting the fixed part matters at small windows, where it takes
 * half of the limit and a summary sized on the whole limit left no room for the turns.
 */
export function summaryBudgetTokens(limit: number, historyBudget: number): number {
  return Math.max(64, Math.floor(Math.min(limit * SUMMARY_LIMIT_SHARE, Math.max(0, historyBudget) * SUMMARY_HISTORY_SHARE)));
}

const SUMMARY_LIMIT_SHARE = 0.25;
const SUMMARY_HISTORY_SHARE = 0.35;

/**
 * The fixed part of a request when none has been measured yet (a conversation imported, or
 * answered without a model): the share the system prompt, four tool definitions and a question
 * with five sources took of an 8k window's limit.
 */
export const UNMEASURED_FIXED_SHARE = 0.4;

/** Tokens of the request left for the stored history. */
export function historyBudgetTokens(settings: CompactionSettings, fixedTokens: number | undefined): number {
  const limit = compactionLimit(settings);
  return limit - (fixedTokens ?? Math.floor(limit * UNMEASURED_FIXED_SHARE));
}

/**
 * Index of the first turn of the recent tail: the turns holding the last `recentMessages` stored
 * messages, and at least the last turn.
 */
export function recentStart(history: readonly HistoryTurn[], recentMessages: number): number {
  let messages = 0;
  let index = history.length;
  while (index > 0 && (messages < recentMessages || index === history.length)) {
    index -= 1;
    messages += history[index]!.messages.length;
  }
  return index;
}
