import type { RankedUnit } from '../retrieval/rank-units.js';
import type { LexicalReranker } from '../retrieval/rerank/lexical-reranker.js';
import type { SearchMode } from '../retrieval/search-mode.js';

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
  passage: Pick<RankedUnit, 'vectorIds'>,
  chunks: readonly T[],
  lexical: LexicalReranker,
): T | undefined {
  const vectorOrder = new Map(passage.vectorIds.map((id, i) => [id, i]));
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
