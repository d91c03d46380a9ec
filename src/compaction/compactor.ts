import type { ChatMessage, ToolMessage } from '../agent/messages.js';
import { truncateMiddle } from './clip-text.js';
import { type CompactionSettings, compactionLimit } from './compaction-config.js';
import type { HistoryTurn } from './conversation-turns.js';
import { type StructuralSummary, updateStructuralSummary } from './structural-summary.js';
import { checkpointMessages, summaryMessages, turnDigest } from './summary-messages.js';
import type { Summarizer } from './summarizer.js';
import { REPLY_PRIMING_TOKENS, estimateMessageTokens } from './token-estimate.js';
import type { TurnCheckpoint } from './turn-checkpoint.js';

export type CompactionStrategy = 'checkpoints' | 'structural_summary' | 'drop_turns' | 'truncate_tool_results';

export interface CompactionInput {
  /** Leading system messages: always kept. */
  system: ChatMessage[];
  /** The stored conversation, whole turns, oldest first. */
  history: HistoryTurn[];
  /** The turn in progress (its user message, tool calls so far): never summarised or dropped. */
  live: ChatMessage[];
  /** Stored checkpoints by turn number. */
  checkpoints: ReadonlyMap<number, TurnCheckpoint>;
  /** The stored structural summary, if any. */
  summary: StructuralSummary | undefined;
  /** Tokens the request carries besides its messages (tool definitions). */
  fixedTokens?: number;
  settings: CompactionSettings;
  /** Writes structural summaries; without one they are rule-based. */
  summarizer?: Summarizer | undefined;
  /** Share of the limit the structural summary may take. */
  summaryShare?: number;
  signal?: AbortSignal | undefined;
  onFallback?: ((error: unknown) => void) | undefined;
}

export interface CompactionResult {
  messages: ChatMessage[];
  /** The stages applied, in order; empty when the prompt fitted as it was. */
  strategies: CompactionStrategy[];
  tokensBefore: number;
  tokensAfter: number;
  limit: number;
  /** False when even the system prompt and the turn in progress, squeezed, exceed the limit. */
  fits: boolean;
  /** The structural summary after this compaction: the caller stores it when `summaryUpdated`. */
  summary: StructuralSummary | undefined;
  summaryUpdated: boolean;
  /** Summarising requests made (structural summary only). */
  llmCalls: number;
}

export const DEFAULT_SUMMARY_SHARE = 0.25;
/** Tool results are never cut below this: a stub that says what was cut is still informative. */
const MIN_TOOL_RESULT_CHARS = 300;

type TurnMode = 'raw' | 'checkpoint' | 'summarised' | 'dropped';

interface TurnState {
  turn: HistoryTurn;
  index: number;
  mode: TurnMode;
  raw: ChatMessage[];
  checkpoint: ChatMessage[] | undefined;
  rawTokens: number;
  checkpointTokens: number;
}

/**
 * Fits a request into the model's budget, in the order of least loss, stopping as soon as it fits:
 *  a. replace checkpointed turns of the middle by their checkpoints, oldest first;
 *  b. summarise the middle (everything between the opening exchange and the recent turns) into
 *     the stored structural summary, extending it when it does not reach far enough;
 *  c. drop the oldest whole turns;
 *  d. cut the largest tool results.
 * Turns are replaced or dropped whole, so a tool call never loses its result; the system prompt
 * and the turn in progress (with the latest user message) are never removed.
 */
export async function compactPrompt(input: CompactionInput): Promise<CompactionResult> {
  const limit = compactionLimit(input.settings);
  const fixed = (input.fixedTokens ?? 0) + REPLY_PRIMING_TOKENS;
  const system = input.system;
  let live = [...input.live];
  const sum = (messages: readonly ChatMessage[]) => messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
  const turns: TurnState[] = input.history.map((turn, index) => {
    const stored = input.checkpoints.get(turn.turn);
    const checkpoint = stored ? checkpointMessages(stored) : undefined;
    return { turn, index, mode: 'raw', raw: [...turn.messages], checkpoint, rawTokens: sum(turn.messages), checkpointTokens: checkpoint ? sum(checkpoint) : 0 };
  });
  let summary = input.summary;
  let summaryShown = false;
  let summaryUpdated = false;
  let llmCalls = 0;
  const strategies: CompactionStrategy[] = [];

  // Rendered once per summary, so its messages' token counts are cached like any other's.
  let rendered: { of: StructuralSummary; messages: ChatMessage[] } | undefined;
  const shownSummary = (): ChatMessage[] => {
    if (!summaryShown || !summary) return [];
    if (rendered?.of !== summary) rendered = { of: summary, messages: summaryMessages(summary) };
    return rendered.messages;
  };
  const turnTokens = (t: TurnState) => (t.mode === 'raw' ? t.rawTokens : t.mode === 'checkpoint' ? t.checkpointTokens : 0);
  // Kept up to date as turns change mode, so checking the budget after each step stays O(1) in the history.
  let turnsTotal = turns.reduce((n, t) => n + turnTokens(t), 0);
  const setMode = (t: TurnState, mode: TurnMode) => {
    turnsTotal -= turnTokens(t);
    t.mode = mode;
    turnsTotal += turnTokens(t);
  };
  const systemTokens = sum(system);
  const count = () => fixed + systemTokens + sum(live) + turnsTotal + sum(shownSummary());
  const fits = () => count() <= limit;
  const render = (): ChatMessage[] => {
    const out = [...system];
    const summaryAt = shownSummary();
    let summaryPlaced = summaryAt.length === 0;
    for (const t of turns) {
      if (!summaryPlaced && t.index > 0 && t.turn.turn >= summary!.fromTurn) {
        out.push(...summaryAt);
        summaryPlaced = true;
      }
      if (t.mode === 'raw') out.push(...t.raw);
      else if (t.mode === 'checkpoint') out.push(...t.checkpoint!);
    }
    if (!summaryPlaced) out.push(...summaryAt);
    return [...out, ...live];
  };
  const result = (tokensBefore: number): CompactionResult => {
    const tokensAfter = count();
    return { messages: render(), strategies, tokensBefore, tokensAfter, limit, fits: tokensAfter <= limit, summary, summaryUpdated, llmCalls };
  };

  const tokensBefore = count();
  if (tokensBefore <= limit) return result(tokensBefore);

  // The opening exchange sets up the conversation and the recent turns carry its thread: stages
  // a and b work on what lies between them.
  const recentFrom = Math.max(1, recentStart(input.history, input.settings.recentMessages));
  const middle = turns.filter((t) => t.index > 0 && t.index < recentFrom);

  // a. Checkpoints, oldest first.
  const checkpointPass = () => {
    let used = false;
    for (const t of middle) {
      if (fits()) break;
      if (t.mode !== 'raw' || !t.checkpoint || t.checkpointTokens >= t.rawTokens) continue;
      setMode(t, 'checkpoint');
      used = true;
    }
    return used;
  };
  if (checkpointPass()) strategies.push('checkpoints');
  if (fits()) return result(tokensBefore);

  // b. The structural summary: the stored one first, extended only if the prompt still does not fit.
  const covered = (t: TurnState) => summary !== undefined && t.turn.turn >= summary.fromTurn && t.turn.turn <= summary.throughTurn;
  const showSummary = () => {
    summaryShown = true;
    for (const t of turns) if (t.index > 0 && covered(t)) setMode(t, 'summarised');
    // Turns the summary now stands for no longer need their checkpoints: give the rest their detail back.
    for (const t of middle) if (t.mode === 'checkpoint') setMode(t, 'raw');
    checkpointPass();
  };
  if (summary) {
    showSummary();
    strategies.push('structural_summary');
  }
  if (!fits()) {
    const pending = middle.filter((t) => !covered(t));
    if (pending.length > 0) {
      const update = await updateStructuralSummary(
        summary,
        pending.map((t) => turnDigest(t.turn, input.checkpoints.get(t.turn.turn))),
        {
          summarizer: input.summarizer,
          budgetTokens: Math.floor(limit * (input.summaryShare ?? DEFAULT_SUMMARY_SHARE)),
          maxRequestTokens: limit,
          signal: input.signal,
          onFallback: input.onFallback,
        },
      );
      llmCalls += update.llmCalls;
      summary = update.summary;
      summaryUpdated = true;
      showSummary();
      if (!strategies.includes('structural_summary')) strategies.push('structural_summary');
    }
  }
  if (fits()) return result(tokensBefore);

  // c. Whole turns, oldest first: the middle, then the opening, then the recent ones. The latest
  // user message is in the turn in progress, unless there is none, when it is the last stored turn.
  const protectedIndex = live.some((m) => m.role === 'user') ? -1 : turns.length - 1;
  const dropOrder = [...middle, ...turns.filter((t) => t.index === 0), ...turns.filter((t) => t.index >= recentFrom)];
  for (const t of dropOrder) {
    if (fits()) break;
    if (t.index === protectedIndex || t.mode === 'summarised' || t.mode === 'dropped') continue;
    setMode(t, 'dropped');
    if (!strategies.includes('drop_turns')) strategies.push('drop_turns');
  }
  if (fits()) return result(tokensBefore);

  // d. The largest tool results, wherever they still are.
  const visible = () => [
    ...turns
      .filter((t) => t.mode === 'raw')
      .map((t) => ({
        messages: t.raw,
        set: (m: ChatMessage[]) => {
          turnsTotal -= t.rawTokens;
          t.raw = m;
          t.rawTokens = sum(m);
          turnsTotal += t.rawTokens;
        },
      })),
    { messages: live, set: (m: ChatMessage[]) => (live = m) },
  ];
  while (!fits()) {
    let best: { holder: ReturnType<typeof visible>[number]; at: number; message: ToolMessage } | undefined;
    for (const holder of visible()) {
      holder.messages.forEach((message, at) => {
        if (message.role !== 'tool' || message.content.length <= MIN_TOOL_RESULT_CHARS) return;
        if (!best || message.content.length > best.message.content.length) best = { holder, at, message };
      });
    }
    if (!best) break;
    const { holder, at, message } = best;
    const excess = count() - limit;
    const tokens = estimateMessageTokens(message);
    const keep = Math.max(MIN_TOOL_RESULT_CHARS, Math.floor(message.content.length * (1 - (excess + 16) / tokens)));
    const next = [...holder.messages];
    next[at] = { ...message, content: truncateMiddle(message.content, Math.min(keep, message.content.length - 1)) };
    holder.set(next);
    if (!strategies.includes('truncate_tool_results')) strategies.push('truncate_tool_results');
  }
  if (fits()) return result(tokensBefore);

  // Nothing else is left to give up but the summary itself.
  if (summaryShown) {
    summaryShown = false;
    if (!strategies.includes('drop_turns')) strategies.push('drop_turns');
  }
  return result(tokensBefore);
}

/** Index of the first turn of the recent tail: the turns holding the last `recentMessages` stored messages. */
function recentStart(history: readonly HistoryTurn[], recentMessages: number): number {
  let messages = 0;
  let index = history.length;
  while (index > 0 && messages < recentMessages) {
    index -= 1;
    messages += history[index]!.messages.length;
  }
  return index;
}
