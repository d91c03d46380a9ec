import { fuse } from './fusion.js';
import type { FusionWeights } from './fusion-weights.js';
import type { SearchMode } from './search-mode.js';
import type { SignalName, SignalRanks } from './signal.js';

/** A row found by the vector side, with the unit it counts for (itself when the corpus has no units). */
export interface VectorCandidate {
  id: string;
  unitId: string;
  /** Cosine similarity. */
  score: number;
  /** The columns the caller asked the vector query to bring along (`payload`), when it asked. */
  row?: Record<string, unknown>;
}

/** A unit found by BM25. */
export interface TextCandidate {
  id: string;
  score: number;
  /** The columns the caller asked the text query to bring along (`payload`), when it asked. */
  row?: Record<string, unknown>;
}

export interface RankedUnit {
  id: string;
  /** Fused (hybrid), the nearest row's cosine (vector) or BM25 (text). */
  score: number;
  /** 1-based rank of the unit in each signal's candidates, null where it was not among them. */
  ranks: SignalRanks;
  /** The unit's rows among the vector candidates, nearest first. */
  vectorIds: string[];
  /** The unit's payload, when a side that found it brought one (the vector side's nearest row first). */
  row?: Record<string, unknown>;
}

/**
 * Ranks units, the thing both retrievers agree on: BM25 scores whole units, and the vector side's
 * rows count for their unit at the rank of its nearest row. Fusing units, not rows, keeps a unit
 * from being counted once per row the embedder found in it, and lets a unit found by one side
 * only keep that side's share. In hybrid mode every signal in `signals` (a corpus's own, unit ids
 * best first) is fused beside the two by its weight; a signal of weight 0 keeps its ids in the
 * union and adds nothing.
 */
export function rankUnits(
  mode: SearchMode,
  vectorHits: readonly VectorCandidate[],
  textHits: readonly TextCandidate[],
  weights: FusionWeights,
  signals: Readonly<Record<string, readonly string[]>> = {},
): RankedUnit[] {
  const byUnit = new Map<string, { score: number; rank: number; rows: string[]; row: Record<string, unknown> | undefined }>();
  for (const hit of vectorHits) {
    const seen = byUnit.get(hit.unitId);
    if (seen) seen.rows.push(hit.id);
    else byUnit.set(hit.unitId, { score: hit.score, rank: byUnit.size + 1, rows: [hit.id], row: hit.row });
  }
  const textRanks = new Map(textHits.map((h, i) => [h.id, i + 1]));
  const textRows = new Map(textHits.flatMap((h) => (h.row ? [[h.id, h.row] as const] : [])));
  const others = mode === 'hybrid' ? Object.entries(signals).filter(([name]) => name !== 'vector' && name !== 'text') : [];
  const otherRanks = others.map(([name, ids]) => [name, firstRanks(ids)] as const);
  const ranked = (id: string, score: number): RankedUnit => {
    const vector = byUnit.get(id);
    const row = vector?.row ?? textRows.get(id);
    const ranks: SignalRanks = { vector: vector?.rank ?? null, text: textRanks.get(id) ?? null };
    for (const [name, byId] of otherRanks) ranks[name] = byId.get(id) ?? null;
    return { id, score, ranks, vectorIds: vector?.rows ?? [], ...(row ? { row } : {}) };
  };

  if (mode === 'vector') return [...byUnit].map(([id, v]) => ranked(id, v.score));
  if (mode === 'text') return textHits.map((h) => ranked(h.id, h.score));
  const weightOf = (name: SignalName) => weights.signals[name] ?? 0;
  return fuse(
    [
      { ids: [...byUnit.keys()], weight: weightOf('vector') },
      { ids: textHits.map((h) => h.id), weight: weightOf('text') },
      ...others.map(([name, ids]) => ({ ids, weight: weightOf(name) })),
    ],
    weights.k ?? 60,
  ).map((h) => ranked(h.id, h.score));
}

/** Each id's 1-based rank in a list, a repeated id keeping its first. */
function firstRanks(ids: readonly string[]): Map<string, number> {
  const ranks = new Map<string, number>();
  ids.forEach((id, i) => {
    if (!ranks.has(id)) ranks.set(id, i + 1);
  });
  return ranks;
}

/** How many distinct units these vector candidates fall in. */
export const unitsIn = (hits: readonly VectorCandidate[]): number => new Set(hits.map((h) => h.unitId)).size;

/** The hits up to the last row of the first `units` units. */
export function withinUnits(hits: readonly VectorCandidate[], units: number): VectorCandidate[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    if (seen.has(h.unitId)) return true;
    if (seen.size >= units) return false;
    seen.add(h.unitId);
    return true;
  });
}
