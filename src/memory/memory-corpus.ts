import { MEMORY_BM25 } from '../db/bm25-index.js';
import { memories } from '../db/schema.js';
import type { Corpus } from '../retrieval/corpus.js';
import { type CorpusFilter, corpusFilter } from '../retrieval/filter.js';
import { DEFAULT_AGENT_ID, type MemoryFilter } from './memory-types.js';

/** What to do when the BM25 index of memories was built by another analyzer. */
export const MEMORY_REINDEX_REMEDY = 'Restart the server: it re-indexes the memories at start (indexUnindexedMemories).';

/** Memories as a corpus of the retrieval engine: each memory is its own unit, filtered by agent and tags. */
export const MEMORY_CORPUS: Corpus = Object.freeze({
  name: 'memories',
  table: memories,
  id: memories.id,
  embedding: memories.embedding,
  bm25Length: memories.bm25Length,
  bm25: MEMORY_BM25,
  filters: { tenantId: memories.tenantId, tags: memories.tags, equals: { agentId: memories.agentId } },
  reindexRemedy: MEMORY_REINDEX_REMEDY,
});

/** A memory filter as the corpus applies it: the store's tenant, the agent (default `default`), the tags. */
export function memoryFilter(tenantId: string, filter: MemoryFilter = {}): CorpusFilter {
  return corpusFilter(tenantId, filter, { agentId: filter.agentId ?? DEFAULT_AGENT_ID });
}
