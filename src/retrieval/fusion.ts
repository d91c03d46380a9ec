export interface RankedList {
  /** Best first. A repeated id keeps its first (best) rank. */
  ids: readonly string[];
  /** How much this retriever counts; 0 keeps its ids in the union but adds nothing to scores. */
  weight: number;
}

export interface FusedHit {
  id: string;
  score: number;
  /** 1-based rank of the id in each input list, `undefined` where that list did not return it. */
  ranks: (number | undefined)[];
}

/**
 * Weighted reciprocal rank fusion (Cormack et al., 2009): score(id) = Σ weight / (k + rank) over
 * the lists that hold the id. It needs only ranks, so BM25 scores and cosine similarities, which
 * live on unrelated scales, never have to be calibrated against each other. An id found by one
 * retriever only is kept, with that retriever's share. k = 60 is the paper's value: larger k
 * flattens the difference between the first ranks.
 *
 * Ties are broken by the best rank in any list, then by id, so the output is deterministic.
 */
export function fuse(lists: readonly RankedList[], k = 60): FusedHit[] {
  if (!(k >= 0) || !Number.isFinite(k)) throw new RangeError(`k must be a finite number >= 0, got ${k}`);
  for (const list of lists) {
    if (!(list.weight >= 0) || !Number.isFinite(list.weight)) throw new RangeError(`weights must be finite and >= 0, got ${list.weight}`);
  }
  const fused = new Map<string, FusedHit & { bestRank: number }>();
  lists.forEach((list, listIndex) => {
    list.ids.forEach((id, i) => {
      const rank = i + 1;
      let hit = fused.get(id);
      if (!hit) {
        hit = { id, score: 0, ranks: new Array<number | undefined>(lists.length).fill(undefined), bestRank: rank };
        fused.set(id, hit);
      }
      if (hit.ranks[listIndex] !== undefined) return;
      hit.ranks[listIndex] = rank;
      hit.score += list.weight / (k + rank);
      hit.bestRank = Math.min(hit.bestRank, rank);
    });
  });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.bestRank - b.bestRank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(({ id, score, ranks }) => ({ id, score, ranks }));
}
