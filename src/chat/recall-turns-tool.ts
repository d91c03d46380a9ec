import { z } from 'zod';
import { type Tool, type ToolShape, defineTool } from '../llm/tool.js';
import { clipToTokens } from '../compaction/clip-text.js';
import type { HistoryTurn } from '../compaction/conversation-turns.js';
import { fitTranscript } from '../compaction/fit-transcript.js';
import { estimateTextTokens } from '../compaction/token-estimate.js';
import { analyze } from '../retrieval/bm25/analyzer.js';

export const RECALL_TURNS_TOOL = 'recall_turns';
/** Turns a query reopens: the best few, in conversation order. */
const QUERY_TURNS = 3;
const MAX_RANGE_TURNS = 50;
const MARKUP = /<[^>]*>/g;

// Bounded, so the schema the model is sent does not spell out 2^53.
const turnNumber = z.number().int().min(1).max(10_000_000);
const recallArgs = z.strictObject({
  fromTurn: turnNumber.optional(),
  toTurn: turnNumber.optional(),
  query: z.string().min(1).max(500).optional(),
});

export const RECALL_TURNS_SHAPE: ToolShape<typeof recallArgs> = {
  name: RECALL_TURNS_TOOL,
  description: 'Reopen earlier turns of this conversation verbatim: fromTurn-toTurn (summaries name them), or a query.',
  parameters: recallArgs,
};

export interface RecallTurnsOptions {
  /** This conversation's stored turns: the tool reads nothing else, so no other conversation, agent or tenant. */
  turns: readonly HistoryTurn[];
  /** The most tokens a result may carry, so that reopening turns cannot overflow the window. */
  budgetTokens: number;
}

/**
 * Reopens turns of this conversation that a checkpoint or summary shortened: their stored
 * messages, verbatim, clipped to a budget. Compaction is lossy; this makes it reversible, the
 * exact words being stored anyway.
 */
export function createRecallTurnsTool(options: RecallTurnsOptions): Tool<typeof recallArgs> {
  const { turns, budgetTokens } = options;
  return defineTool({
    ...RECALL_TURNS_SHAPE,
    execute({ fromTurn, toTurn, query }) {
      if (turns.length === 0) return 'This conversation has no earlier turns.';
      let chosen: HistoryTurn[];
      if (fromTurn !== undefined) {
        const to = Math.min(toTurn ?? fromTurn, fromTurn + MAX_RANGE_TURNS - 1);
        if (to < fromTurn) throw new Error('toTurn must not be before fromTurn');
        chosen = turns.filter((t) => t.turn >= fromTurn && t.turn <= to);
        if (chosen.length === 0) return `No turns ${fromTurn}-${to}: this conversation has turns 1-${turns.at(-1)!.turn}.`;
      } else if (query !== undefined) {
        chosen = byWords(turns, query);
        if (chosen.length === 0) return `No earlier turn of this conversation matches "${query}".`;
      } else {
        throw new Error('Give fromTurn (and toTurn), or query');
      }
      return render(chosen, budgetTokens);
    },
  });
}

/** Turns by rarity-weighted overlap with the query's terms: a word every turn shares tells nothing. */
function byWords(turns: readonly HistoryTurn[], query: string): HistoryTurn[] {
  const terms = new Set(analyze(query));
  if (terms.size === 0) return [];
  // Markup is left out: a search result's `<source key="...">` would make "key" match every search.
  const turnTerms = turns.map((t) => new Set(analyze(t.messages.map((m) => (m.content ?? '').replace(MARKUP, ' ')).join('\n'))));
  const df = new Map<string, number>();
  for (const set of turnTerms) for (const term of set) if (terms.has(term)) df.set(term, (df.get(term) ?? 0) + 1);
  const scored = turns
    .map((turn, i) => {
      let score = 0;
      for (const term of terms) if (turnTerms[i]!.has(term)) score += Math.log(1 + turns.length / df.get(term)!);
      return { turn, score };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || b.turn.turn - a.turn.turn)
    .slice(0, QUERY_TURNS);
  return scored.map((s) => s.turn).sort((a, b) => a.turn - b.turn);
}

/** Each turn's transcript gets an even share of the budget; tool output is squeezed before words are. */
function render(turns: readonly HistoryTurn[], budgetTokens: number): string {
  const share = Math.max(48, Math.floor(budgetTokens / turns.length) - 8);
  const parts = turns.map((t) => `Turn ${t.turn}:\n${fitTranscript(t.messages, share)}`);
  const text = parts.join('\n\n');
  return estimateTextTokens(text) <= budgetTokens ? text : clipToTokens(text, budgetTokens);
}
