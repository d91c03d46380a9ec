import { fuse } from '../retrieval/fusion.js';
import type { FusionWeights, SearchMode } from './knowledge-search.js';
import type { LexicalReranker } from '../retrieval/rerank/lexical-reranker.js';

/** A chunk found by the vector side, with the passage it belongs to. */
export interface ChunkCandidate {
  id: string;
  passageId: string;
  score: number;
}

/** A passage found by BM25, named by its first chunk's id. */
export interface PassageCandidate {
  id: string;
  score: number;
}

export interface RankedPassage {
  passageId: string;
  /** Fused (hybrid), the best chunk's cosine (vector) or BM25 (text). */
  score: number;
  /** 1-based rank of the passage in each retriever's candidates, null where it was not among them. */
  ranks: { vector: number | null; text: number | null };
  /** The passage's chunks among the vector candidates, nearest first. */
  vectorChunks: string[];
}

/**
 * Ranks passages, the unit both retrievers agree on: BM25 scores whole passages, and the vector
 * side's chunks count for their passage at the rank of its nearest chunk. Fusing passages, not
 * chunks, keeps a passage from being counted once per chunk the embedder found in it, and lets a
 * passage found by one side only keep that side's share.
 */
export function rankPassages(
  mode: SearchMode,
  vectorHits: readonly ChunkCandidate[],
  textHits: readonly PassageCandidate[],
  weights: FusionWeights,
): RankedPassage[] {
  const byPassage = new Map<string, { score: number; rank: number; chunks: string[] }>();
  for (const hit of vectorHits) {
    const seen = byPassage.get(hit.passageId);
    if (seen) seen.chunks.push(hit.id);
    else byPassage.set(hit.passageId, { score: hit.score, rank: byPassage.size + 1, chunks: [hit.id] });
  }
  const textRanks = new Map(textHits.map((h, i) => [h.id, { score: h.score, rank: i + 1 }]));
  const ranked = (passageId: string, score: number): RankedPassage => ({
    passageId,
    score,
    ranks: { vector: byPassage.get(passageId)?.rank ?? null, text: textRanks.get(passageId)?.rank ?? null },
    vectorChunks: byPassage.get(passageId)?.chunks ?? [],
  });

  if (mode === 'vector') return [...byPassage].map(([passageId, v]) => ranked(passageId, v.score));
  if (mode === 'text') return textHits.map((h) => ranked(h.id, h.score));
  return fuse(
    [
      { ids: [...byPassage.keys()], weight: weights.vector },
      { ids: textHits.map((h) => h.id), weight: weights.text },
    ],
    weights.k ?? 60,
  ).map((h) => ranked(h.id, h.score));
}

export interface PassageChunk {
  chunkId: string;
  chunkIndex: number;
  text: string;
}

/**
 * The chunk a passage hit cites. Vector search cites the passage's nearest chunk; text and hybrid
 * cite the chunk that covers most of the query (the lexical reranker over the passage's chunks,
 * nearest chunks first, then in document order, which also decides between equals).
 */
export function citedChunk<T extends PassageChunk>(
  query: string,
  mode: SearchMode,
  passage: RankedPassage,
  chunks: readonly T[],
  lexical: LexicalReranker,
): T | undefined {
  const vectorOrder = new Map(passage.vectorChunks.map((id, i) => [id, i]));
  const ordered = [...chunks].sort(
    (a, b) => (vectorOrder.get(a.chunkId) ?? Infinity) - (vectorOrder.get(b.chunkId) ?? Infinity) || a.chunkIndex - b.chunkIndex,
  );
  if (mode === 'vector' || ordered.length <= 1) return ordered[0];
  const [best] = lexical.rerankSync(
    query,
    ordered.map((c) => ({ id: c.chunkId, text: c.text, chunk: c })),
    1,
  );
  return best?.chunk;
}
