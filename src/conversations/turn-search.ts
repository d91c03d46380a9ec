import { turns } from '../db/schema/index.js';
import { defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import type { FusionWeights } from '../retrieval/fusion-weights.js';
import { turnFusionWeightsFor } from './turn-fusion-weights.js';
import { type TenantCorpusOptions, createRetrievalEngine } from '../retrieval/retrieval-engine.js';
import { searchRows } from '../retrieval/row-search.js';
import type { SearchMode } from '../retrieval/search-mode.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { type TenantScoped, tenantScoped } from '../tenancy/tenant-scoped.js';
import { TURN_CORPUS, type TurnFilter, turnFilter } from './turn-corpus.js';

export interface TurnSearchOptions extends TurnFilter {
  topK?: number;
  /** `hybrid` (default) fuses the vector and BM25 candidates; `vector` and `text` rank by one side. */
  mode?: SearchMode;
  /** Cosine similarity below which a turn is not a vector candidate (BM25 may still find it in hybrid mode). */
  minScore?: number;
  /** Overrides the configured fusion weights for this query. */
  weights?: FusionWeights;
  signal?: AbortSignal;
}

/** A past turn found by a search. */
export interface TurnHit {
  conversationId: string;
  turn: number;
  question: string;
  answer: string;
  /** When the question was asked. */
  at: Date;
  agentId: string;
  /** Null for a conversation without a user. */
  userId: string | null;
  /** Hybrid: the fused score. Vector: cosine similarity. Text: BM25. */
  score: number;
  /** 1-based rank of the turn in each side's candidates, null where it was not among them. */
  ranks: { vector: number | null; text: number | null };
}

/** Episodic recall: a tenant's past turns by meaning and by words. */
export interface TurnSearch {
  search(query: string, options: TurnSearchOptions): Promise<TurnHit[]>;
  readonly weights: Readonly<FusionWeights>;
}

// What a hit shows: the vector side brings it along, BM25-only hits are read once more.
const turnColumns = {
  conversationId: turns.conversationId,
  turn: turns.turn,
  question: turns.question,
  answer: turns.answer,
  at: turns.at,
  agentId: turns.agentId,
  userId: turns.userId,
};
type TurnRow = { [K in keyof typeof turnColumns]: (typeof turns.$inferSelect)[K] };

export function createTurnSearch(options: TenantCorpusOptions): TurnSearch {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const engine = createRetrievalEngine({ ...options, analyzer: options.analyzer ?? defaultAnalyzer });
  const weights = Object.freeze({ ...(options.weights ?? turnFusionWeightsFor(options.embedder.id)) });

  async function search(query: string, opts: TurnSearchOptions): Promise<TurnHit[]> {
    const hits = await searchRows<TurnRow>(engine, db, TURN_CORPUS, query, {
      mode: opts.mode ?? 'hybrid',
      filter: turnFilter(tenantId, opts),
      topK: opts.topK ?? 10,
      weights: opts.weights ?? weights,
      minScore: opts.minScore,
      payload: turnColumns,
      signal: opts.signal,
    });
    return hits.map(({ row, score, ranks }) => ({ ...row, at: new Date(row.at), userId: row.userId === '' ? null : row.userId, score, ranks }));
  }

  return { search, weights };
}

/** Every tenant's turn search over the same database and embedder. */
export function createTenantTurnSearch(options: Omit<TenantCorpusOptions, 'tenantId'>): TenantScoped<TurnSearch> {
  return tenantScoped((tenantId) => createTurnSearch({ ...options, tenantId }));
}
