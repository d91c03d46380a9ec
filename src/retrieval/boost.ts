/**
 * How a boost favours a hit after fusion. `by place`: the hit rises from place p to
 * round(p / (1 + weight)) and scores stay (`favourByRank`), for rank-fused scores that lie too
 * close together for a gain on them to stay a boost. `by score`: its score gains |score| × weight
 * and the list is re-sorted by score (`favourByScore`).
 */
export type BoostKind = 'by place' | 'by score';

/** Boost weights by name (`{ timeWindow: 0.5 }`): they replace the declared ones for one search. */
export type BoostWeights = Readonly<Record<string, number | undefined>>;

/** A named re-ordering after fusion that favours some hits, by a weight. */
export interface Boost<Hit, Context> {
  kind: BoostKind;
  name: string;
  /** The weight when the search names none; 0 leaves the order as it was. */
  weight: number;
  /** Which hits this search favours, or null when it favours none (the order is left as it was). */
  favours(context: Context): ((hit: Hit) => boolean) | null;
}

/** A fixed re-ordering a corpus declares (diversity): it keeps the hits, changes their order only. */
export interface RankingStep<Hit, Context> {
  kind: 'step';
  name: string;
  apply<T extends Hit>(hits: readonly T[], context: Context): T[];
}

/** What a corpus applies to its fused hits, in this order. */
export type Reordering<Hit, Context> = Boost<Hit, Context> | RankingStep<Hit, Context>;

/** Hits gathered into groups (turns into their conversations) before the group's own re-orderings. */
export interface GroupedRanking<Hit, Group, Context> {
  group: { name: string; apply(hits: readonly Hit[], context: Context): Group[] };
  steps: readonly Reordering<Group, Context>[];
}

/** The hits re-ordered by a corpus's declared boosts and steps, in their order; `weights` replaces boosts' declared weights by name. */
export function applyBoosts<Hit extends { score: number }, T extends Hit, Context>(
  declared: readonly Reordering<Hit, Context>[],
  hits: readonly T[],
  context: Context,
  weights?: BoostWeights,
): T[];
export function applyBoosts<Hit, Group extends { score: number }, Context>(
  declared: GroupedRanking<Hit, Group, Context>,
  hits: readonly Hit[],
  context: Context,
  weights?: BoostWeights,
): Group[];
export function applyBoosts(
  declared: readonly Reordering<{ score: number }, unknown>[] | GroupedRanking<unknown, { score: number }, unknown>,
  hits: readonly unknown[],
  context: unknown,
  weights: BoostWeights = {},
): unknown[] {
  if (!Array.isArray(declared)) {
    const grouped = declared as GroupedRanking<unknown, { score: number }, unknown>;
    return applyBoosts(grouped.steps, grouped.group.apply(hits, context), context, weights);
  }
  let ordered = [...(hits as readonly { score: number }[])];
  for (const reordering of declared as readonly Reordering<{ score: number }, unknown>[]) {
    if (reordering.kind === 'step') {
      ordered = reordering.apply(ordered, context);
      continue;
    }
    const favoured = reordering.favours(context);
    if (!favoured) continue;
    const weight = weights[reordering.name] ?? reordering.weight;
    ordered = reordering.kind === 'by place' ? favourByRank(ordered, favoured, weight) : favourByScore(ordered, favoured, weight);
  }
  return ordered;
}

/** The hits re-ordered with the `favoured` ones raised by place (see BoostKind); scores are left as they were. */
export function favourByRank<T>(hits: readonly T[], favoured: (hit: T) => boolean, boost: number): T[] {
  if (boost === 0) return [...hits];
  return hits
    .map((hit, i) => {
      const inside = favoured(hit);
      return { hit, i, inside, place: inside ? Math.round((i + 1) / (1 + boost)) : i + 1 };
    })
    .sort((a, b) => a.place - b.place || Number(b.inside) - Number(a.inside) || a.i - b.i)
    .map(({ hit }) => hit);
}

/** The hits re-sorted by score after the `favoured` ones gain |score| × boost (see BoostKind). */
export function favourByScore<T extends { score: number }>(hits: readonly T[], favoured: (hit: T) => boolean, boost: number): T[] {
  if (boost === 0) return [...hits];
  // Scores may be cosine similarities below zero: the gain is on the magnitude, so it always helps.
  const boosted = hits.map((hit) => (favoured(hit) ? { ...hit, score: hit.score + Math.abs(hit.score) * boost } : hit));
  return boosted.sort((a, b) => b.score - a.score);
}
