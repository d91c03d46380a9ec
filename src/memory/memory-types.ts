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

export interface SearchMemoriesOptions extends MemoryFilter {
  topK?: number;
  /** Cosine similarity in [-1, 1]; hits below it are left out. */
  minScore?: number;
}

export interface MemoryHit {
  memory: Memory;
  /** Cosine similarity between the query and the memory. */
  score: number;
}

export interface ListMemoriesOptions extends MemoryFilter {
  limit?: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  cursor?: string;
}

export interface MemoryPage {
  items: Memory[];
  nextCursor: string | null;
}

export interface TagCount {
  tag: string;
  count: number;
}

export interface MemoryStore {
  save(input: SaveMemoryInput): Promise<SaveMemoryResult>;
  get(key: string, agentId?: string): Promise<Memory | null>;
  search(query: string, options?: SearchMemoriesOptions): Promise<MemoryHit[]>;
  /** As `search`, with a query vector already in the store's space. */
  searchByVector(vector: number[], options?: SearchMemoriesOptions): Promise<MemoryHit[]>;
  delete(key: string, agentId?: string): Promise<boolean>;
  list(options?: ListMemoriesOptions): Promise<MemoryPage>;
  tagCounts(filter?: MemoryFilter): Promise<TagCount[]>;
  /** Deletes every memory matching the filter; at least one tag filter is required. Returns the count. */
  deleteByTags(filter: MemoryFilter): Promise<number>;
}
