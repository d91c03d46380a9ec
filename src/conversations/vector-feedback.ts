/**
 * Pseudo-relevance feedback on the vector side (Rocchio's): the query's vector moved toward the
 * mean of its `turns` nearest turns by `weight` before the vector side ranks, so that a question
 * whose evidence is several turns alike ("How many doctors did I visit?") finds the others through
 * the first ones.
 */
export interface VectorFeedback {
  turns: number;
  weight: number;
}

/**
 * What `groupBy: "conversation"` ranks by: which sessions are about a subject is a question of
 * breadth, and the feedback finds the sessions that speak of it in other words. Chosen on
 * LongMemEval's tuning part (`npm run bench:longmemeval` with BENCH_TUNE, conversations ranked by
 * CONVERSATION_FUSION_WEIGHTS), session R_all@5: 0.94 without; 0.95–0.98 at every setting of
 * turns 7, 10, 15 and 20 by weight 1, 2, 3 and 5; 0.97 (1.00 at @10) here, in the middle of it.
 *
 * Not for a turn search: the turn a question asks about is one, and the mean of its neighbours
 * moves away from it. On SQuAD's turn calibration (`npm run calibrate:turns`) it took hit@5 from
 * 0.907 to 0.878 at the turns' fusion weight (vector 0.5), to 0.772 at the one that did best on
 * LongMemEval's turns (vector 1.5: turn R_all@10 0.86 → 0.89), and to 0.879 as a third list
 * beside the plain two at weight 0.25. A conversation's turns scored by the vector side show their
 * cosine to the moved vector.
 */
export const CONVERSATION_VECTOR_FEEDBACK: Readonly<VectorFeedback> = Object.freeze({ turns: 10, weight: 3 });
