import type { RankedConversation } from './conversation-ranking.js';

/**
 * How much a turn's conversation counts in a hybrid turn list's order, beside the turn itself:
 * past the first CONVERSATION_PRIOR_KEPT turns, a turn is ordered by 1 / (k + its place) + PRIOR /
 * (k + its conversation's place as `groupBy: "conversation"` ranks them), k 20, and the diversity
 * pick runs on that. A session about the question holds most of its answers, and the embedder
 * (fed back, CONVERSATION_VECTOR_FEEDBACK) tells which sessions are about it better than a turn's
 * words do; the turn that says the question's words best may sit in one that is not.
 *
 * Chosen on LongMemEval's tuning part (`npm run bench:longmemeval`, BENCH_TUNE, hybrid, all 87;
 * session R_all@5 / @10 / turn R_all@10): none 0.89/0.95/0.85; with 5 kept, prior 4 0.93/1.00/0.89,
 * 6 0.93/1.00/0.87, 8 0.94/1.00/0.86; prior 4 with 3, 4 or 6 kept 0.93/1.00/0.87–0.89; none kept, 6
 * 0.95/1.00/0.87. Kept turns are what single-fact questions need: on SQuAD's turn calibration
 * (`npm run calibrate:turns`, a sentence's paragraph standing for its session; hit@5 / hit@10) none
 * kept fell from 0.9050/0.9425 to 0.7965/0.8835 at prior 4, 3 kept to 0.8970/0.9280, 5 kept
 * 0.9030/0.9400. Conversations ranked without the feedback, or with the vector side at 1 or 0.5,
 * lifted LongMemEval's sessions by 0.03 at most.
 */
export const CONVERSATION_PRIOR = 4;

/** The first turns of the list keep their places whatever their conversations' (see CONVERSATION_PRIOR). */
export const CONVERSATION_PRIOR_KEPT = 5;

const K = 20;

/** Each conversation's 1-based place in a ranking. */
export function conversationPlaces(ranked: readonly RankedConversation<unknown>[]): ReadonlyMap<string, number> {
  return new Map(ranked.map((c, i) => [c.conversationId, i + 1]));
}

/**
 * The hits keyed for ordering by their own place and their conversation's (see CONVERSATION_PRIOR):
 * `score` is the key, `hit` the hit. A conversation the ranking lacks comes after all it holds.
 * Without places or a prior, the key is the hit's score.
 */
export function withConversationPrior<T extends { score: number; conversationId: string }>(
  hits: readonly T[],
  places: ReadonlyMap<string, number> | undefined,
  prior = CONVERSATION_PRIOR,
  kept = CONVERSATION_PRIOR_KEPT,
): { score: number; conversationId: string; hit: T }[] {
  if (prior === 0 || !places) return hits.map((hit) => ({ score: hit.score, conversationId: hit.conversationId, hit }));
  const last = places.size + 1;
  // A kept turn counts as if its conversation were the first: no turn after it can pass it.
  const placeOf = (hit: T, i: number) => (i < kept ? 1 : (places.get(hit.conversationId) ?? last));
  return hits.map((hit, i) => ({ score: 1 / (K + i + 1) + prior / (K + placeOf(hit, i)), conversationId: hit.conversationId, hit }));
}
