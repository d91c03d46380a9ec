import { chunks } from '../db/schema/index.js';
import { CHUNK_BM25 } from '../retrieval/bm25/bm25-index-tables.js';
import type { Corpus } from '../retrieval/corpus.js';
import type { CorpusFilter } from '../retrieval/filter.js';

/**
 * The HNSW candidate list of a chunk search, at least: the chunks' graph is built sparse (m 8) for
 * cheap inserts, and a wider search makes up for it. On all of SciFact (`npm run bench:hnsw`), 400
 * finds 99.05% of the exact 10 nearest chunks (99.55% on pgvector's default graph searched with
 * 200), in 14.2 ms instead of 10.4.
 */
const CHUNK_EF_SEARCH = 400;

/**
 * Document passages as a corpus of the retrieval engine: the embedder ranks chunks (its input
 * window is small), BM25 ranks passages (runs of a document's chunks, see passages.ts), and a
 * chunk counts for its passage. A passage's postings belong to its first chunk, whose id is the
 * passage's. Tags are copied onto the chunks at ingest, so filters need no join.
 */
export const PASSAGE_CORPUS: Corpus = Object.freeze({
  name: 'passages',
  table: chunks,
  id: chunks.id,
  unit: chunks.passageId,
  embedding: chunks.embedding,
  bm25Length: chunks.bm25Length,
  bm25: CHUNK_BM25,
  filters: { tenantId: chunks.tenantId, tags: chunks.tags },
  efSearch: CHUNK_EF_SEARCH,
  // Kept by migration 0009's triggers: a tenant's chunks have one scope.
  filterStats: {
    table: 'chunks',
    scopes: (filter: CorpusFilter) =>
      Object.keys(filter.equals).length || Object.keys(filter.notEquals ?? {}).length || Object.keys(filter.oneOf ?? {}).length ? null : [''],
  },
});
