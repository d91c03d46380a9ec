import type { FusionWeights } from '../retrieval/fusion-weights.js';
import type { Page } from '../retrieval/page.js';
import type { SearchMode } from '../retrieval/search-mode.js';

export const DEFAULT_AGENT_ID = 'default';

export interface Memory {
  key: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  agentId: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface SaveMemoryInput {
  key: string;
  content: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  agentId?: string;
}

export interface SaveMemoryResult {
  memory: Memory;
  created: boolean;
  /** False when the content was unchanged and the stored vector was kept. */
  reembedded: boolean;
}

/** Tag filters; tags are matched after trimming and case-folding. */
export interface MemoryFilter {
  agentId?: string;
  /** At least one of these tags. */
  tagsAny?: readonly string[];
  /** Every one of these tags. */
  tagsAll?: readonly string[];
  /** None of these tags. */
  tagsNone?: readonly string[];
}

export interface VectorSearchOptions extends MemoryFilter {
  topK?: number;
  /**
   * Cosine similarity in [-1, 1], applied to the vector side: memories less similar than this are
   * not vector candidates. In hybrid mode one BM25 still finds is returned; text mode ignores it.
   */
  minScore?: number;
}

export interface SearchMemoriesOptions extends VectorSearchOptions {
  /**
   * `hybrid` (default): the vector and BM25 candidates (max(topK × 5, 50) each, at most 1000 or
   * topK) fused by weighted reciprocal rank fusion over their union, so a memory found only by
   * its keywords (a name, a number) is returned too. `vector`: cosine similarity only. `text`:
   * BM25 over the memories' content only, nothing embedded.
   */
  mode?: SearchMode;
  /** Overrides the store's fusion weights for this query (hybrid mode). */
  weights?: FusionWeights;
}

export interface MemoryHit {
  memory: Memory;
  /** Hybrid: the fused (weighted RRF) score. Vector: cosine similarity. Text: BM25. */
  score: number;
}

export interface MemorySearchHit extends MemoryHit {
  /** 1-based rank of the memory in each side's candidates, null where it was not among them. */
  ranks: { vector: number | null; text: number | null };
}

export interface ListMemoriesOptions extends MemoryFilter {
  limit?: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  cursor?: string;
}

export type MemoryPage = Page<Memory>;

export interface TagCount {
  tag: string;
  count: number;
}

export interface MemoryStore {
  save(input: SaveMemoryInput): Promise<SaveMemoryResult>;
  get(key: string, agentId?: string): Promise<Memory | null>;
  search(query: string, options?: SearchMemoriesOptions): Promise<MemorySearchHit[]>;
  /** Vector search only (cosine similarity), with a query vector already in the store's space. */
  searchByVector(vector: number[], options?: VectorSearchOptions): Promise<MemorySearchHit[]>;
  delete(key: string, agentId?: string): Promise<boolean>;
  list(options?: ListMemoriesOptions): Promise<MemoryPage>;
  tagCounts(filter?: MemoryFilter): Promise<TagCount[]>;
  /** Deletes every memory matching the filter; at least one tag filter is required. Returns the count. */
  deleteByTags(filter: MemoryFilter): Promise<number>;
}
