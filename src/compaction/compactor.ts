import type { ChatMessage, ToolMessage } from '../llm/messages.js';
import { truncateMiddle } from './clip-text.js';
import { type CompactionSettings, compactionLimit } from './compaction-config.js';
import { recentStart, summaryBudgetTokens } from './history-budget.js';
import { buildRuleBasedCheckpoint } from './rule-based-checkpoint.js';
import type { HistoryTurn } from './conversation-turns.js';
import { type StructuralSummary, updateStructuralSummary } from './structural-summary.js';
import { checkpointMessages, summaryMessages, turnDigest } from './summary-messages.js';
import type { Summarizer } from './summarizer.js';
import { REPLY_PRIMING_TOKENS, estimateMessageTokens } from './token-estimate.js';
import type { TurnCheckpoint } from './turn-checkpoint.js';
import { withSpan } from '../util/spans.js';

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
  summarizer?: Summarizer;
  signal?: AbortSignal;
  onFallback?: (error: unknown) => void;
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

/** Tool results are never cut below this: a stub that says what was cut is still informative. */
const MIN_TOOL_RESULT_CHARS = 300;

type TurnMode = 'raw' | 'checkpoint' | 'summarised' | 'dropped';

interface TurnState {
  turn: HistoryTurn;
  index: number;
  mode: TurnMode;
  raw: ChatMessage[];
  /** The stored checkpoint, or the rule-based one standing in for it. */
  standIn: TurnCheckpoint;
  checkpoint: ChatMessage[];
  rawTokens: number;
  checkpointTokens: number;
}

/**
 * Fits a request into the model's budget, recent turns first: what gives way is the oldest
 * material, in the order of least loss, stopping as soon as it fits:
 *  a. older turns (before the recent tail) become their checkpoints, oldest first;
 *  b. the stored structural summary stands in for the turns it covers;
 *  c. the recent turns become their checkpoints, oldest first, the turn before the question last;
 *  d. the summary is extended over the older turns it does not cover yet: the only stage that
 *     waits on the summariser, reached only when nothing cheaper fits (a background extension
 *     after each reply keeps it rare);
 *  e. whole turns are dropped, oldest first, never the turn before the question;
 *  f. the largest tool results are cut;
 *  g. the summary, and last of all the turn before the question, give way.
 * A turn without a stored checkpoint (its writer has not finished, or failed) stands in with its
 * rule-based one, so a turn's prompt depends on what is stored, not on background timing. Turns
 * are replaced or dropped whole, so a tool call never loses its result; the system prompt and the
 * turn in progress (with the latest user message) are never removed.
 */
export function compactPrompt(input: CompactionInput): Promise<CompactionResult> {
  // Traced as `compaction`, a child of the turn's span: what it did to the prompt, and what it cost.
  return withSpan('compaction', { 'memrag.compaction.turns': input.history.length }, async (span) => {
    const result = await fitPrompt(input);
    span.setAttributes({
      'memrag.compaction.strategies': result.strategies,
      'memrag.compaction.tokens_before': result.tokensBefore,
      'memrag.compaction.tokens_after': result.tokensAfter,
      'memrag.compaction.limit': result.limit,
      'memrag.compaction.fits': result.fits,
      'memrag.compaction.summary_updated': result.summaryUpdated,
      'memrag.compaction.llm_calls': result.llmCalls,
    });
    return result;
  });
}

async function fitPrompt(input: CompactionInput): Promise<CompactionResult> {
  const limit = compactionLimit(input.settings);
  const fixed = (input.fixedTokens ?? 0) + REPLY_PRIMING_TOKENS;
  const system = input.system;
  let live = [...input.live];
  const sum = (messages: readonly ChatMessage[]) => messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
  const turns: TurnState[] = input.history.map((turn, index) => {
    const standIn = input.checkpoints.get(turn.turn) ?? buildRuleBasedCheckpoint(turn);
    const checkpoint = checkpointMessages(standIn);
    return { turn, index, mode: 'raw', raw: [...turn.messages], standIn, checkpoint, rawTokens: sum(turn.messages), checkpointTokens: sum(checkpoint) };
  });
  let summary = input.summary;
  let summaryShown = false;
  let summaryUpdated = false;
  let llmCalls = 0;
  const strategies: CompactionStrategy[] = [];
  const applied = (strategy: CompactionStrategy) => {
    if (!strategies.includes(strategy)) strategies.push(strategy);
  };

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
      if (!summaryPlaced && t.turn.turn >= summary!.fromTurn) {
        out.push(...summaryAt);
        summaryPlaced = true;
      }
      if (t.mode === 'raw') out.push(...t.raw);
      else if (t.mode === 'checkpoint') out.push(...t.checkpoint);
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

  // The latest user message is in the turn in progress, unless there is none, when it is the last
  // stored turn: that one stays whole, and the turn before the question is the one before it.
  const questionIndex = live.some((m) => m.role === 'user') ? -1 : turns.length - 1;
  const previousIndex = questionIndex === -1 ? turns.length - 1 : turns.length - 2;
  // Turns the stored summary covers count as older, whatever the recent tail's length.
  const afterSummary = summary ? turns.findIndex((t) => t.turn.turn > summary!.throughTurn) : 0;
  const tail = Math.max(recentStart(input.history, input.settings.recentMessages), afterSummary === -1 ? turns.length : afterSummary);
  const recentFrom = Math.max(0, Math.min(tail, previousIndex));
  const older = turns.filter((t) => t.index < recentFrom);
  const recent = turns.filter((t) => t.index >= recentFrom && t.index !== questionIndex);

  const checkpointPass = (candidates: readonly TurnState[]) => {
    let used = false;
    for (const t of candidates) {
      if (fits()) break;
      if (t.mode !== 'raw' || t.checkpointTokens >= t.rawTokens) continue;
      setMode(t, 'checkpoint');
      used = true;
    }
    return used;
  };

  // a. Older turns as checkpoints, oldest first.
  if (checkpointPass(older)) applied('checkpoints');
  if (fits()) return result(tokensBefore);

  // b. The stored summary in place of the turns it covers; the other older turns get their detail
  // back and give it up again oldest first.
  const covered = (t: TurnState) => summary !== undefined && t.turn.turn >= summary.fromTurn && t.turn.turn <= summary.throughTurn;
  const showSummary = () => {
    summaryShown = true;
    for (const t of older) setMode(t, covered(t) ? 'summarised' : 'raw');
    checkpointPass(older);
  };
  if (summary && older.some(covered)) {
    showSummary();
    applied('structural_summary');
    if (fits()) return result(tokensBefore);
  }

  // c. The recent turns as checkpoints, oldest first: the turn before the question goes last.
  if (checkpointPass(recent)) applied('checkpoints');
  if (fits()) return result(tokensBefore);

  // d. Extending the summary: the one stage that waits on the summariser.
  const pending = older.filter((t) => !covered(t) && (summary === undefined || t.turn.turn > summary.throughTurn));
  if (pending.length > 0) {
    const historyBudget = limit - (count() - turnsTotal - sum(shownSummary()));
    const update = await updateStructuralSummary(
      summary,
      pending.map((t) => turnDigest(t.turn, t.standIn)),
      {
        summarizer: input.summarizer,
        budgetTokens: summaryBudgetTokens(limit, historyBudget),
        maxRequestTokens: limit,
        signal: input.signal,
        onFallback: input.onFallback,
      },
    );
    llmCalls += update.llmCalls;
    summary = update.summary;
    summaryUpdated = true;
    showSummary();
    checkpointPass(recent);
    applied('structural_summary');
  }
  if (fits()) return result(tokensBefore);

  // e. Whole turns, oldest first, the turn before the question kept.
  for (const t of [...older, ...recent]) {
    if (fits()) break;
    if (t.index === previousIndex || t.mode === 'summarised' || t.mode === 'dropped') continue;
    setMode(t, 'dropped');
    applied('drop_turns');
  }
  if (fits()) return result(tokensBefore);

  // f. The largest tool results, wherever they still are.
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
    applied('truncate_tool_results');
  }
  if (fits()) return result(tokensBefore);

  // g. Nothing else is left to give up but the summary, then the turn before the question.
  if (summaryShown) {
    summaryShown = false;
    applied('drop_turns');
  }
  const previous = turns[previousIndex];
  if (!fits() && previous && previous.mode !== 'dropped') {
    setMode(previous, 'dropped');
    applied('drop_turns');
  }
  return result(tokensBefore);
}
