import { fuse } from './fusion.js';
import type { FusionWeights } from './fusion-weights.js';
import type { SearchMode } from './search-mode.js';

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
  /** 1-based rank of the unit in each retriever's candidates, null where it was not among them. */
  ranks: { vector: number | null; text: number | null };
  /** The unit's rows among the vector candidates, nearest first. */
  vectorIds: string[];
  /** The unit's payload, when a side that found it brought one (the vector side's nearest row first). */
  row?: Record<string, unknown>;
}

/**
 * Ranks units, the thing both retrievers agree on: BM25 scores whole units, and the vector side's
 * rows count for their unit at the rank of its nearest row. Fusing units, not rows, keeps a unit
 * from being counted once per row the embedder found in it, and lets a unit found by one side
 * only keep that side's share.
 */
export function rankUnits(mode: SearchMode, vectorHits: readonly VectorCandidate[], textHits: readonly TextCandidate[], weights: FusionWeights): RankedUnit[] {
  const byUnit = new Map<string, { score: number; rank: number; rows: string[]; row: Record<string, unknown> | undefined }>();
  for (const hit of vectorHits) {
    const seen = byUnit.get(hit.unitId);
    if (seen) seen.rows.push(hit.id);
    else byUnit.set(hit.unitId, { score: hit.score, rank: byUnit.size + 1, rows: [hit.id], row: hit.row });
  }
  const textRanks = new Map(textHits.map((h, i) => [h.id, i + 1]));
  const textRows = new Map(textHits.flatMap((h) => (h.row ? [[h.id, h.row] as const] : [])));
  const ranked = (id: string, score: number): RankedUnit => {
    const vector = byUnit.get(id);
    const row = vector?.row ?? textRows.get(id);
    return {
      id,
      score,
      ranks: { vector: vector?.rank ?? null, text: textRanks.get(id) ?? null },
      vectorIds: vector?.rows ?? [],
      ...(row ? { row } : {}),
    };
  };

  if (mode === 'vector') return [...byUnit].map(([id, v]) => ranked(id, v.score));
  if (mode === 'text') return textHits.map((h) => ranked(h.id, h.score));
  return fuse(
    [
      { ids: [...byUnit.keys()], weight: weights.vector },
      { ids: textHits.map((h) => h.id), weight: weights.text },
    ],
    weights.k ?? 60,
  ).map((h) => ranked(h.id, h.score));
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
