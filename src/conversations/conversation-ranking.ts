import type { FusionWeights } from '../retrieval/fusion-weights.js';
import type { SignalRanks } from '../retrieval/signal.js';

/**
 * How conversations are ranked: weighted reciprocal rank fusion in which a conversation takes, on
 * each side, the rank of its best turn among that side's candidates, weight / (k + rank), summed
 * over the sides. The vector side counts twice the text side here, where a turn's fusion gives it
 * half (TURN_FUSION_WEIGHTS_BY_EMBEDDER): BM25 pins the turn that says the question's words, but
 * whether a session is about the question is what the embedder reads better. Chosen on
 * LongMemEval's tuning part (`npm run bench:longmemeval` with BENCH_TUNE, hybrid, sessions of the
 * 50 candidate turns), session R_all@5 / @10: 0.90 / 0.98 by the turns' fused scores (the best
 * whole, the next half, and so on), 0.90 / 0.95 at vector 0.5, 0.90 / 0.99 at 1, 0.94 / 0.99 at 2
 * and 0.94 / 0.98 at 3 (k 20); at vector 2, k 5 0.93, k 10 0.94, k 40 0.93. Counting a
 * conversation's further turns too (each at 0.3 or 0.5 of the one before) gave 0.93–0.94, its rank
 * among conversations instead of its best turn's 0.93 at best.
 */
export const CONVERSATION_FUSION_WEIGHTS: Readonly<FusionWeights> = Object.freeze({ signals: { vector: 2, text: 1 }, k: 20 });

/** A turn as conversations are ranked by it: its score, and its rank among each side's candidates. */
export interface RankableTurn {
  conversationId: string;
  score: number;
  ranks: SignalRanks;
}

export interface ConversationRankingOptions {
  /** Each signal's weight and RRF's k; default CONVERSATION_FUSION_WEIGHTS. */
  weights?: FusionWeights;
}

/** A conversation found by its turns. */
export interface RankedConversation<T> {
  conversationId: string;
  /** The fused score of its best turn on each side (see CONVERSATION_FUSION_WEIGHTS). */
  score: number;
  /** Its turns among the hits, best first. */
  turns: T[];
}

/** The conversations of a list of hits, best first; ties keep the order of their first hits. */
export function rankConversations<T extends RankableTurn>(hits: readonly T[], options: ConversationRankingOptions = {}): RankedConversation<T>[] {
  const { signals, k = 60 } = options.weights ?? CONVERSATION_FUSION_WEIGHTS;
  const byConversation = new Map<string, T[]>();
  for (const hit of hits) {
    const turns = byConversation.get(hit.conversationId);
    if (turns) turns.push(hit);
    else byConversation.set(hit.conversationId, [hit]);
  }
  // A signal where none of the conversation's turns was a candidate adds nothing.
  const side = (weight: number, turns: readonly T[], name: string) => {
    const best = Math.min(...turns.map((t) => t.ranks[name] ?? Infinity));
    return best === Infinity ? 0 : weight / (k + best);
  };
  const weighted = Object.entries(signals);
  const ranked = [...byConversation].map(([conversationId, unsorted]) => {
    const turns = [...unsorted].sort((a, b) => b.score - a.score);
    return { conversationId, score: weighted.reduce((score, [name, weight]) => score + side(weight, turns, name), 0), turns };
  });
  // Stable: conversations of equal score stay in the order their best turns came.
  return ranked.sort((a, b) => b.score - a.score);
}
