/**
 * How much each further turn of a conversation already in the list keeps of its score: the second
 * turn of a session counts for DECAY of its score, the third DECAY², and so on. A question whose
 * evidence lies in several sessions ("how many times have I…") needs several sessions near the
 * top, and a long session on the question's topic would otherwise fill it. Chosen on
 * LongMemEval's tuning part (`npm run bench:longmemeval` with BENCH_TUNE, hybrid): turn R_all@10
 * overall / multi-session 0.84 / 0.47 at 1 (none), 0.84 / 0.53 at 0.95, 0.82 / 0.47 at 0.9 and
 * 0.78 / 0.47 at 0.8, where questions whose evidence is several turns of one session lose them.
 */
export const SAME_CONVERSATION_DECAY = 0.95;

/**
 * The hits in the order a greedy pick makes when every turn's score is discounted by the turns of
 * its conversation picked before it. Scores are left as they were: only the order changes.
 */
export function diversifyByConversation<T extends { score: number; conversationId: string }>(hits: readonly T[], decay = SAME_CONVERSATION_DECAY): T[] {
  if (decay >= 1) return [...hits];
  const left = [...hits];
  const picked: T[] = [];
  const taken = new Map<string, number>();
  const effective = (hit: T) => {
    const n = taken.get(hit.conversationId) ?? 0;
    // Scores may be below zero (cosine): a discount must lower them, whatever their sign.
    return hit.score >= 0 ? hit.score * decay ** n : hit.score / decay ** n;
  };
  while (left.length > 0) {
    let best = 0;
    for (let i = 1; i < left.length; i++) if (effective(left[i]!) > effective(left[best]!)) best = i;
    const [hit] = left.splice(best, 1);
    picked.push(hit!);
    taken.set(hit!.conversationId, (taken.get(hit!.conversationId) ?? 0) + 1);
  }
  return picked;
}
