import { sql } from 'drizzle-orm';
import { queryRows } from '../db/query-rows.js';
import { turns } from '../db/schema/index.js';
import { uuidArray } from '../db/sql-arrays.js';
import { l2Normalize } from '../embeddings/l2-normalize.js';
import { asUrgentReads } from '../db/urgent-reads.js';
import { defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { type FusionWeights, copyFusionWeights } from '../retrieval/fusion-weights.js';
import { turnFusionWeightsFor } from './turn-fusion-weights.js';
import { type CorpusSearchOptions, type TenantCorpusOptions, createRetrievalEngine } from '../retrieval/retrieval-engine.js';
import { searchRows } from '../retrieval/row-search.js';
import type { SearchMode } from '../retrieval/search-mode.js';
import { type BoostWeights, applyBoosts } from '../retrieval/boost.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { type TimeWindow, readTimeWindow } from '../text/time-window.js';
import { CONVERSATION_VECTOR_FEEDBACK, type VectorFeedback } from './vector-feedback.js';
import type { RankedConversation } from './conversation-ranking.js';
import { CONVERSATION_PRIOR_KEPT, type ConversationStanding, conversationPriorFor, conversationStandings } from './conversation-prior.js';
import { type TenantScoped, tenantScoped } from '../tenancy/tenant-scoped.js';
import {
  CONVERSATION_BOOSTS,
  TURN_BOOSTS,
  TURN_CORPUS,
  type TurnFilter,
  type TurnHit,
  type TurnRankingContext,
  turnFilter,
  turnKeysAnalyzer,
} from './turn-corpus.js';

export interface TurnSearchOptions extends TurnFilter {
  topK?: number;
  /** `hybrid` (default) fuses the vector and BM25 candidates; `vector` and `text` rank by one side. */
  mode?: SearchMode;
  /** Cosine similarity below which a turn is not a vector candidate (BM25 may still find it in hybrid mode). */
  minScore?: number;
  /** Overrides the configured fusion weights for this query. */
  weights?: FusionWeights;
  /** What a turn or conversation inside the query's time window gains, in places (see `TIME_WINDOW_RANK_BOOST`); for tuning. */
  timeWindowBoost?: number;
  /** The turn corpus's boost weights by name (`{ timeWindow: 0.5 }`, see TURN_BOOSTS), over `timeWindowBoost`; for tuning. */
  boosts?: BoostWeights;
  /** What each further turn of a conversation keeps (see `SAME_CONVERSATION_DECAY`); 1 leaves the order as ranked. */
  conversationDecay?: number;
  /** Turns of a conversation before the decay starts (see `SAME_CONVERSATION_FREE_TURNS`). */
  conversationFreeTurns?: number;
  /** How much a turn's conversation counts in a hybrid turn list's order (see `CONVERSATION_PRIOR`, by embedder `CONVERSATION_PRIOR_BY_EMBEDDER`); for tuning. */
  conversationPrior?: number;
  /** See `CONVERSATION_PRIOR_KEPT`; for tuning. */
  conversationPriorKept?: number;
  /** See `CONVERSATION_COVERAGE`; for tuning. */
  conversationCoverage?: number;
  /** See `CONVERSATION_COVERAGE_PAGE`; for tuning. */
  conversationCoveragePage?: number;
  /** How conversations are ranked by their turns' ranks on each side (see `CONVERSATION_FUSION_WEIGHTS`); for tuning. */
  conversationWeights?: FusionWeights;
  /** Pseudo-relevance feedback on the vector side; default none for turns, CONVERSATION_VECTOR_FEEDBACK for conversations; for tuning. */
  vectorFeedback?: VectorFeedback;
  /** The conversations' feedback alone, over `vectorFeedback`: what ranks them for the turn list's prior too; for tuning. */
  conversationFeedback?: VectorFeedback;
  signal?: AbortSignal;
}

/** Turns found, and the time window the query was read to name (null: none, or none in the past). */
export interface TurnSearchResult {
  hits: TurnHit[];
  timeWindow: TimeWindow | null;
}

/** A conversation found by its best turns (see `CONVERSATION_FUSION_WEIGHTS`), with those turns. */
export type ConversationHit = RankedConversation<TurnHit>;

export interface ConversationSearchResult {
  conversations: ConversationHit[];
  timeWindow: TimeWindow | null;
}

export type { TurnHit } from './turn-corpus.js';

/**
 * Episodic recall: a tenant's past turns by meaning and by words, as of a moment (`asOf`, default
 * now): turns said later are left out, and a time the query names ("two weeks ago", "in May") is
 * read against it to favour the turns said then.
 */
export interface TurnSearch {
  /** The best `topK` turns, no conversation filling the list alone (see `SAME_CONVERSATION_DECAY`). */
  search(query: string, options: TurnSearchOptions): Promise<TurnSearchResult>;
  /** The best `topK` conversations, ranked by their best turns, each with its turns among the candidates. */
  searchConversations(query: string, options: TurnSearchOptions): Promise<ConversationSearchResult>;
  readonly weights: Readonly<FusionWeights>;
}

/**
 * Turns ranked before they are re-ordered (time window, diversity) or grouped: enough for several
 * sessions' worth of a question's evidence to come up from below the first page.
 */
const CANDIDATES = 50;

type SharedText = NonNullable<CorpusSearchOptions['sharedText']>;

// What a hit shows: a hybrid search fuses 250 candidates a side or more, so it reads these after
// fusion (see PAYLOAD_ALONG_MAX_CANDIDATES); vector and text modes bring them with their rows.
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
  const engine = createRetrievalEngine({ ...options, analyzer: turnKeysAnalyzer(options.analyzer ?? defaultAnalyzer) });
  const weights = Object.freeze(copyFusionWeights(options.weights ?? turnFusionWeightsFor(options.embedder.id)));
  const conversationPrior = conversationPriorFor(options.embedder.id);

  /**
   * The time window the query names, read once per search: a hybrid turn search ranks its
   * conversations beside its turns, and both read the same window (chrono's reading is a few
   * percent of a search's time). Without an asOf it is read against now.
   */
  const windowOf = (query: string, opts: TurnSearchOptions) => readTimeWindow(query, opts.asOf ?? new Date());

  /** The candidates, best first; read as a caller waits for them (asUrgentReads). */
  const candidates = (query: string, opts: TurnSearchOptions, feedback = opts.vectorFeedback, sharedText?: SharedText) =>
    asUrgentReads(() => rankedCandidates(query, opts, feedback, sharedText));

  async function rankedCandidates(query: string, opts: TurnSearchOptions, feedback: VectorFeedback | undefined, sharedText?: SharedText): Promise<TurnHit[]> {
    const mode = opts.mode ?? 'hybrid';
    const filter = turnFilter(tenantId, opts);
    // Made while the text side runs, as a query's own vector is.
    const vector = feedback && feedback.turns > 0 && feedback.weight !== 0 && mode !== 'text' ? withFeedback(query, filter, feedback, opts.signal) : undefined;
    // Its failure is the search's, reported once (the engine awaits it); not an unhandled rejection meanwhile.
    vector?.catch(() => undefined);
    const rows = await searchRows<TurnRow>(engine, db, TURN_CORPUS, query, {
      ...(vector && { vector }),
      mode,
      filter,
      topK: Math.max(opts.topK ?? 10, CANDIDATES),
      weights: opts.weights ?? weights,
      minScore: opts.minScore,
      payload: turnColumns,
      signal: opts.signal,
      ...(sharedText && { sharedText }),
    });
    return rows.map(({ row, score, ranks }) => ({ ...row, at: new Date(row.at), userId: row.userId === '' ? null : row.userId, score, ranks }));
  }

  /** The query's vector moved toward its nearest turns' mean (see VectorFeedback). */
  async function withFeedback(query: string, filter: ReturnType<typeof turnFilter>, feedback: VectorFeedback, signal?: AbortSignal): Promise<number[]> {
    const q = await engine.embedQuery(query, signal, true);
    const nearest = await engine.vectorCandidates(TURN_CORPUS, q, filter, feedback.turns, undefined, false);
    if (nearest.length === 0) return q;
    const [row] = await queryRows<{ mean: string | null }>(
      db,
      sql`SELECT avg(${turns.embedding})::text AS mean FROM ${turns}
        WHERE ${turns.tenantId} = ${tenantId} AND ${turns.id} = ANY(${uuidArray(nearest.map((h) => h.id))})`,
    );
    // Gone since they were found (a conversation deleted meanwhile): the query as it was.
    if (!row?.mean) return q;
    const mean = JSON.parse(row.mean) as number[];
    return l2Normalize(q.map((x, i) => x + feedback.weight * (mean[i] ?? 0)));
  }

  /** What the corpus's boosts and steps read of a search (see TURN_BOOSTS), and the boost weights it sets. */
  const rankingOf = (opts: TurnSearchOptions, timeWindow: TimeWindow | null): [TurnRankingContext, BoostWeights] => [
    {
      timeWindow,
      conversationDecay: opts.conversationDecay,
      conversationFreeTurns: opts.conversationFreeTurns,
      conversationPriorKept: opts.conversationPriorKept,
      conversationCoverage: opts.conversationCoverage,
      conversationCoveragePage: opts.conversationCoveragePage,
      conversationWeights: opts.conversationWeights,
    },
    { timeWindow: opts.timeWindowBoost, ...opts.boosts },
  ];

  async function search(query: string, opts: TurnSearchOptions): Promise<TurnSearchResult> {
    // Hybrid only: vector and text modes rank by their one side. Within one conversation, or
    // within the kept turns (a chat's recall of three), it would change nothing.
    const kept = opts.conversationPriorKept ?? CONVERSATION_PRIOR_KEPT;
    const prior =
      (opts.mode ?? 'hybrid') === 'hybrid' && opts.conversationId === undefined && (opts.topK ?? 10) > kept ? (opts.conversationPrior ?? conversationPrior) : 0;
    // The conversations' standings as searchConversations ranks them, searched beside the turns: the
    // two searches differ in their vector side only, and find the text side once.
    const sharedText: SharedText | undefined = prior !== 0 ? {} : undefined;
    const timeWindow = windowOf(query, opts);
    const standings = sharedText ? standingsOfConversations(query, opts, timeWindow, sharedText) : undefined;
    standings?.catch(() => undefined);
    const hits = await candidates(query, opts, opts.vectorFeedback, sharedText);
    const [context, weights] = rankingOf(opts, timeWindow);
    const favoured = applyBoosts(TURN_BOOSTS, hits, { ...context, conversationPrior: prior, conversationStandings: await standings }, weights);
    return { hits: favoured.slice(0, opts.topK ?? 10), timeWindow };
  }

  async function standingsOfConversations(
    query: string,
    opts: TurnSearchOptions,
    timeWindow: TimeWindow | null,
    sharedText: SharedText,
  ): Promise<ReadonlyMap<string, ConversationStanding>> {
    return conversationStandings(await rankedConversations(query, opts, timeWindow, sharedText));
  }

  async function searchConversations(query: string, opts: TurnSearchOptions): Promise<ConversationSearchResult> {
    const timeWindow = windowOf(query, opts);
    const conversations = await rankedConversations(query, opts, timeWindow);
    return { conversations: conversations.slice(0, opts.topK ?? 10), timeWindow };
  }

  /** Every conversation of the candidates, best first. */
  async function rankedConversations(
    query: string,
    opts: TurnSearchOptions,
    timeWindow: TimeWindow | null,
    sharedText?: SharedText,
  ): Promise<ConversationHit[]> {
    const hits = await candidates(query, opts, opts.conversationFeedback ?? opts.vectorFeedback ?? CONVERSATION_VECTOR_FEEDBACK, sharedText);
    return applyBoosts(CONVERSATION_BOOSTS, hits, ...rankingOf(opts, timeWindow));
  }

  return { search, searchConversations, weights };
}

/** Every tenant's turn search over the same database and embedder. */
export function createTenantTurnSearch(options: Omit<TenantCorpusOptions, 'tenantId'>): TenantScoped<TurnSearch> {
  return tenantScoped((tenantId) => createTurnSearch({ ...options, tenantId }));
}
