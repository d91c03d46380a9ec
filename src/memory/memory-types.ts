import type { FusionWeights } from '../retrieval/fusion-weights.js';
import type { SignalRanks } from '../retrieval/signal.js';
import type { MetadataFilter } from '../retrieval/metadata-filter.js';
import type { Page } from '../retrieval/page.js';
import type { SearchMode } from '../retrieval/search-mode.js';
import type { TimeWindow } from '../text/time-window.js';
import type { QuarantineReason } from './quarantine-reasons.js';

export const DEFAULT_AGENT_ID = 'default';

/** Words of a user's message a memory was drawn from: `text` is `message.slice(start, end)`. */
export interface MemoryQuote {
  text: string;
  start: number;
  end: number;
}

/**
 * One origin of a memory (provenance): who wrote it and, when a chat turn did, that turn and the
 * user's words it was drawn from. A memory gains one with each new wording.
 */
export interface MemoryOrigin {
  actor: MemoryActor['type'];
  conversationId: string | null;
  turn: number | null;
  quote: MemoryQuote | null;
  at: Date;
  /** The conversation it points to was deleted (its quote with it). */
  deleted?: boolean;
}

export type MemoryStatus = 'active' | 'quarantined';

export interface Memory {
  key: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  agentId: string;
  /** The user the memory belongs to; null for the agent's shared memories. */
  userId: string | null;
  /** Where it came from, oldest first. */
  sources: MemoryOrigin[];
  /** Valid time: when the fact began to hold in the world; null: always, as far as known. */
  validFrom: Date | null;
  /** Valid time: when it stopped holding; null: it still does. */
  validUntil: Date | null;
  /** Set once the memory was contradicted (invalidated): kept, but not recalled. */
  validTo: Date | null;
  /** After this, the memory reads as gone. */
  expiresAt: Date | null;
  /** `quarantined`: the firewall read it as an instruction; kept for review, never recalled until approved. */
  status: MemoryStatus;
  /** Why it was quarantined; empty while active. */
  quarantineReasons: QuarantineReason[];
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Which memories a key names: an agent's (default `default`) and, within it, one user's, or the
 * agent's shared ones when `userId` is absent or null.
 */
export interface MemoryScope {
  agentId?: string;
  userId?: string | null;
}

/** Who made a change, as the history records it. */
export type MemoryActor =
  | { type: 'api' }
  | { type: 'tool'; conversationId: string; turn: number }
  | { type: 'extraction'; conversationId?: string; turn?: number }
  /** The server itself: the expiry sweeper. */
  | { type: 'system' };

export type MemoryEventType = 'created' | 'updated' | 'invalidated' | 'deleted' | 'expired' | 'approved';

export interface MemoryEvent {
  event: MemoryEventType;
  content: string | null;
  previousContent: string | null;
  tags: string[];
  previousTags: string[] | null;
  /** Valid time as the event left it (record time is `at`). */
  validFrom: Date | null;
  validUntil: Date | null;
  /** The memory's origins as the event left them (empty on events recorded before origins were kept). */
  sources: MemoryOrigin[];
  actor: MemoryActor;
  at: Date;
}

/** When a fact held in the world; both optional, `validUntil` after `validFrom`. */
export interface ValidTime {
  validFrom?: Date | null;
  validUntil?: Date | null;
}

/** Which moment a read is about: record time (`asOf`, what memrag knew then) and valid time (`validAt`). */
export interface ReadMoment {
  /** The memory as it was then, from its history; absent: as it is now. */
  asOf?: Date;
  /** Only facts valid at this moment (default now); null: whenever the fact holds. */
  validAt?: Date | null;
}

export interface SaveMemoryInput extends MemoryScope, ValidTime {
  key: string;
  content: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  /** Seconds from now until it expires; or `expiresAt`. Neither: it never expires. */
  ttlSeconds?: number;
  expiresAt?: Date;
  /** Default `{type: 'api'}`. */
  actor?: MemoryActor;
  /** Written by a model through the API (MCP): screened by the firewall as the model's tools are. */
  untrusted?: boolean;
}

/** The fields of a PATCH: only those given change. */
export interface MemoryPatch extends ValidTime {
  content?: string;
  /** Replaces the tags; or add and remove some with the two below. */
  tags?: string[];
  addTags?: string[];
  removeTags?: string[];
  metadata?: Record<string, unknown>;
  /** A number sets the expiry from now; null clears it. */
  ttlSeconds?: number | null;
  expiresAt?: Date | null;
}

/** One decision of a fact extraction, applied with the others in one transaction. */
export type MemoryChange =
  | ({ op: 'add'; content: string; tags?: string[]; metadata?: Record<string, unknown>; quote?: MemoryQuote } & ValidTime)
  | ({ op: 'update'; key: string; content: string; tags?: string[]; quote?: MemoryQuote } & ValidTime)
  | { op: 'invalidate'; key: string };

export interface AppliedChange {
  op: MemoryChange['op'];
  /** `skipped`: an add whose normalised text the scope already holds, or a key it does not hold. */
  status: 'applied' | 'skipped';
  key?: string;
  reason?: string;
  memory?: Memory;
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
  /** Only facts valid at this moment (valid time); default now. */
  validAt?: Date;
  /** Only this user's memories (with `includeShared`, the agent's shared ones too). Absent: every user's. */
  userId?: string;
  includeShared?: boolean;
  /** On top-level metadata keys, applied in SQL before the LIMIT. */
  metadata?: MetadataFilter;
  /** Invalidated memories are left out unless this is true. */
  includeInvalid?: boolean;
  /** Quarantined memories are left out unless this is true. */
  includeQuarantined?: boolean;
  /** Only memories of this status (a review queue: `quarantined`); overrides `includeQuarantined`. */
  status?: MemoryStatus;
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
  /**
   * The moment the question is asked (default now), in record time: the memories as they were
   * then, from their history (those created later left out, those changed since in their wording
   * of then), and a time the query names ("last month") is read against it to favour the memories
   * created then.
   */
  asOf?: Date;
  /**
   * The time window the query names, when the caller has read it already (`readTimeWindow`, to
   * show it); absent: the search reads it against `asOf`.
   */
  timeWindow?: TimeWindow | null;
}

export interface MemoryHit {
  memory: Memory;
  /** Hybrid: the fused (weighted RRF) score. Vector: cosine similarity. Text: BM25. */
  score: number;
}

export interface MemorySearchHit extends MemoryHit {
  /** 1-based rank of the memory in each side's candidates, null where it was not among them. */
  ranks: SignalRanks;
}

export interface ListMemoriesOptions extends MemoryFilter {
  /** The memories as they were at this moment (record time), from their history. */
  asOf?: Date;
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
  /** Saves up to 100 memories in one transaction: all or none. */
  saveMany(inputs: readonly SaveMemoryInput[]): Promise<SaveMemoryResult[]>;
  /** Changes only the fields given; null when the scope holds no such (live) key. */
  patch(key: string, scope: MemoryScope, patch: MemoryPatch, actor?: MemoryActor): Promise<Memory | null>;
  /** Applies extraction decisions for one scope in one transaction, adds deduplicated by normalised text. */
  applyChanges(scope: MemoryScope, changes: readonly MemoryChange[], actor: MemoryActor): Promise<AppliedChange[]>;
  /** Every change of the key in the scope, oldest first; also after it was deleted. */
  history(key: string, scope?: MemoryScope): Promise<MemoryEvent[]>;
  /**
   * An unexpired memory (invalidated ones included: they keep their key); with `asOf`, as it was
   * then (null when it did not exist yet); with `validAt`, null when the fact did not hold then.
   */
  get(key: string, scope?: MemoryScope, moment?: ReadMoment): Promise<Memory | null>;
  search(query: string, options?: SearchMemoriesOptions): Promise<MemorySearchHit[]>;
  /** Vector search only (cosine similarity), with a query vector already in the store's space. */
  searchByVector(vector: number[], options?: VectorSearchOptions): Promise<MemorySearchHit[]>;
  delete(key: string, scope?: MemoryScope, actor?: MemoryActor): Promise<boolean>;
  list(options?: ListMemoriesOptions): Promise<MemoryPage>;
  tagCounts(filter?: MemoryFilter): Promise<TagCount[]>;
  /**
   * Lineage: the tenant's memories drawn from a conversation that is being deleted. `cascade`:
   * those whose every source lies in it are deleted; the others (and all, without cascade) keep
   * their sources there marked `deleted`, their quotes dropped.
   */
  forgetConversation(conversationId: string, options: { cascade: boolean; actor?: MemoryActor }): Promise<{ deleted: number; marked: number }>;
  /**
   * Releases a quarantined memory (status `active`, an `approved` event): `not_found` when the
   * scope holds no such live key, `not_quarantined` when it is active already.
   */
  approve(key: string, scope?: MemoryScope, actor?: MemoryActor): Promise<{ memory: Memory } | { error: 'not_found' | 'not_quarantined' }>;
  /** Deletes every memory matching the filter; at least one tag filter is required. Returns the count. */
  deleteByTags(filter: MemoryFilter): Promise<number>;
}
