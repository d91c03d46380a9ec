/**
 * How much each further turn of a conversation already in the list keeps of its score: past the
 * first `SAME_CONVERSATION_FREE_TURNS` turns of a session, the next counts for DECAY of its score,
 * the one after DECAY², and so on. A question whose evidence lies in several sessions ("how many
 * times have I…") needs several sessions near the top, and a long session on the question's topic
 * would otherwise fill it; a question whose evidence is several turns of one session needs them
 * kept. Chosen on LongMemEval's tuning part (`npm run bench:longmemeval` with BENCH_TUNE, hybrid),
 * turn R_all@10 overall / multi-session: no decay 0.84 / 0.47; 0.95 0.86 / 0.53 with 1 or 2 free
 * turns, 0.85 / 0.47 with 3; 0.8 0.79–0.84, 0.5 0.63–0.78, where one session's several evidence
 * turns are pushed out. Two free turns keep `npm run bench:recall`'s vector-mode recall@10 (0.651;
 * 0.599 with one).
 */
export const SAME_CONVERSATION_DECAY = 0.95;

/** How many turns of a conversation keep their whole score before the decay starts. */
export const SAME_CONVERSATION_FREE_TURNS = 2;

/**
 * The hits in the order a greedy pick makes when every turn's score is discounted by the turns of
 * its conversation picked before it (and those `before` counts as picked already, by
 * conversation). Scores are left as they were: only the order changes.
 */
export function diversifyByConversation<T extends { score: number; conversationId: string }>(
  hits: readonly T[],
  decay = SAME_CONVERSATION_DECAY,
  freeTurns = SAME_CONVERSATION_FREE_TURNS,
  before: ReadonlyMap<string, number> = new Map(),
): T[] {
  if (decay >= 1) return [...hits];
  const left = [...hits];
  const picked: T[] = [];
  const taken = new Map(before);
  const effective = (hit: T) => {
    const n = Math.max(0, (taken.get(hit.conversationId) ?? 0) + 1 - freeTurns);
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
