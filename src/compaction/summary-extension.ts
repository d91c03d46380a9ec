import { type CompactionSettings, compactionLimit } from './compaction-config.js';
import type { HistoryTurn } from './conversation-turns.js';
import { historyBudgetTokens, summaryBudgetTokens } from './history-budget.js';
import { buildRuleBasedCheckpoint } from './rule-based-checkpoint.js';
import { type StructuralSummary, type SummaryUpdate, updateStructuralSummary } from './structural-summary.js';
import { checkpointMessages, summaryMessages, turnDigest } from './summary-messages.js';
import type { Summarizer } from './summarizer.js';
import { estimateMessagesTokens } from './token-estimate.js';
import type { TurnCheckpoint } from './turn-checkpoint.js';

/** Past this share of its budget, the history as the next turn would send it is summarised ahead... */
export const EXTEND_ABOVE_SHARE = 0.75;
/** ...down to this share, so that one extension serves several turns. */
export const EXTEND_DOWN_TO_SHARE = 0.45;
/** Turns an extension ahead of time never absorbs: the next question's closest context. */
export const KEEP_RECENT_TURNS = 2;

/**
 * Whether a conversation whose latest turn is `turn` (turns numbered from 1) may have a turn to
 * absorb: with KEEP_RECENT_TURNS turns or fewer it has none, and `extendSummaryAhead` would return
 * undefined whatever the history, so a caller need not load it.
 */
export function mayExtendSummaryAfter(turn: number): boolean {
  return turn > KEEP_RECENT_TURNS;
}

export interface SummaryExtensionInput {
  /** The stored conversation, whole turns, oldest first, the turn just answered last. */
  history: readonly HistoryTurn[];
  checkpoints: ReadonlyMap<number, TurnCheckpoint>;
  summary: StructuralSummary | undefined;
  settings: CompactionSettings;
  /** What the conversation's requests carry besides the history (system, tools, question with sources), as last measured. */
  fixedTokens: number | undefined;
  summarizer?: Summarizer;
  signal?: AbortSignal;
  onFallback?: (error: unknown) => void;
}

/**
 * After a reply, extends the stored summary when the history has grown past a share of what the
 * next request leaves it, so that the next turns find the summary ready and compact without
 * waiting on the summariser. Undefined when no extension is due.
 */
export async function extendSummaryAhead(input: SummaryExtensionInput): Promise<SummaryUpdate | undefined> {
  const { history, settings } = input;
  const limit = compactionLimit(settings);
  const budget = historyBudgetTokens(settings, input.fixedTokens);
  const summary = input.summary;
  const covered = (t: HistoryTurn) => summary !== undefined && t.turn >= summary.fromTurn && t.turn <= summary.throughTurn;
  // Each turn at its cheapest (raw or checkpoint), as compaction will send it without a summariser.
  const standIns = new Map(history.map((t) => [t.turn, input.checkpoints.get(t.turn) ?? buildRuleBasedCheckpoint(t)]));
  const cost = new Map(
    history.map((t) => [t.turn, Math.min(estimateMessagesTokens(t.messages), estimateMessagesTokens(checkpointMessages(standIns.get(t.turn)!)))]),
  );
  const summaryTokens = summary ? estimateMessagesTokens(summaryMessages(summary)) : 0;
  const uncovered = history.filter((t) => !covered(t));
  let total = summaryTokens + uncovered.reduce((n, t) => n + cost.get(t.turn)!, 0);
  if (total <= budget * EXTEND_ABOVE_SHARE) return undefined;

  // The oldest turns past the summary's end, enough of them to bring the history down to the lower share.
  const summaryBudget = summaryBudgetTokens(limit, budget);
  const absorbable = history.slice(0, Math.max(0, history.length - KEEP_RECENT_TURNS)).filter((t) => summary === undefined || t.turn > summary.throughTurn);
  total += summaryBudget - summaryTokens;
  const absorbed: HistoryTurn[] = [];
  for (const t of absorbable) {
    if (total <= budget * EXTEND_DOWN_TO_SHARE) break;
    absorbed.push(t);
    total -= cost.get(t.turn)!;
  }
  if (absorbed.length === 0) return undefined;
  return updateStructuralSummary(
    summary,
    absorbed.map((t) => turnDigest(t, standIns.get(t.turn))),
    { summarizer: input.summarizer, budgetTokens: summaryBudget, maxRequestTokens: limit, signal: input.signal, onFallback: input.onFallback },
  );
}
