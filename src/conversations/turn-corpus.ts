import { turns } from '../db/schema/index.js';
import { TURN_BM25 } from '../retrieval/bm25/bm25-index-tables.js';
import type { Analyzer } from '../retrieval/bm25/analyzer.js';
import type { GroupedRanking, Reordering } from '../retrieval/boost.js';
import type { Corpus } from '../retrieval/corpus.js';
import { type CorpusFilter, corpusFilter } from '../retrieval/filter.js';
import type { FusionWeights } from '../retrieval/fusion-weights.js';
import type { SignalRanks } from '../retrieval/signal.js';
import { type TimeWindowContext, insideTimeWindow, timeWindowBoost } from '../retrieval/time-window-boost.js';
import {
  CONVERSATION_COVERAGE_PAGE,
  CONVERSATION_PRIOR_KEPT,
  type ConversationStanding,
  coverConversations,
  orderByConversations,
} from './conversation-prior.js';
import { type RankedConversation, rankConversations } from './conversation-ranking.js';
import { TURN_KEYS_VERSION } from './turn-record.js';

/** What to do when the BM25 index of turns was built by another analyzer. */
export const TURN_REINDEX_REMEDY = 'Restart the server: it re-indexes the turns at start (reindexStaleTurns).';

/**
 * The HNSW candidate list of a turn search, at least: the turns' graph is sparse (TURN_HNSW in
 * vector-space.ts), and 160 on it finds what pgvector's default 80 finds on a graph of m 16. A
 * store whose graph was built denser before keeps it, and finds a little more for a little longer.
 */
export const TURN_EF_SEARCH = 160;

/**
 * Past conversation turns as a corpus of the retrieval engine (episodic recall): each turn is its
 * own unit, filtered by agent, user and conversation. Turns have no tags: the filter SQL refuses a
 * tag filter on them rather than drop it.
 */
export const TURN_CORPUS: Corpus = Object.freeze({
  name: 'turns',
  table: turns,
  id: turns.id,
  embedding: turns.embedding,
  bm25Length: turns.bm25Length,
  bm25: TURN_BM25,
  filters: {
    tenantId: turns.tenantId,
    equals: { agentId: turns.agentId, userId: turns.userId, conversationId: turns.conversationId },
    at: turns.at,
  },
  efSearch: TURN_EF_SEARCH,
  reindexRemedy: TURN_REINDEX_REMEDY,
});

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
  /** 1-based rank of the turn in each signal's candidates, null where it was not among them. */
  ranks: SignalRanks;
}

/** What a turn search's re-orderings read: the query's time window, and the tuning a search may set. */
export interface TurnRankingContext extends TimeWindowContext {
  /** See `SAME_CONVERSATION_DECAY`. */
  conversationDecay?: number;
  /** See `SAME_CONVERSATION_FREE_TURNS`. */
  conversationFreeTurns?: number;
  /** See `CONVERSATION_FUSION_WEIGHTS`. */
  conversationWeights?: FusionWeights;
  /** See `CONVERSATION_PRIOR`. */
  conversationPrior?: number;
  /** Each conversation's standing as `groupBy: "conversation"` ranks them, for CONVERSATION_PRIOR. */
  conversationStandings?: ReadonlyMap<string, ConversationStanding>;
  /** See `CONVERSATION_PRIOR_KEPT`. */
  conversationPriorKept?: number;
  /** See `CONVERSATION_COVERAGE`. */
  conversationCoverage?: number;
  /** See `CONVERSATION_COVERAGE_PAGE`. */
  conversationCoveragePage?: number;
}

/**
 * What re-orders the turns a search fused: no conversation filling the list alone
 * (`SAME_CONVERSATION_DECAY`) and, past the first turns, their conversations' standings counted
 * (`CONVERSATION_PRIOR`, when the search ranked them), then the turns said inside the query's
 * time window favoured by place (TIME_WINDOW_RANK_BOOST), then, past the first page, the
 * conversations ranked first that it lacks (`CONVERSATION_COVERAGE`). In that order: the first
 * step re-sorts, which the window leaves alone, and the last leaves the first page alone.
 */
export const TURN_BOOSTS: readonly Reordering<TurnHit, TurnRankingContext>[] = Object.freeze([
  {
    kind: 'step',
    name: 'conversationDiversity',
    apply: (hits, context) =>
      orderByConversations(hits, {
        standings: context.conversationStandings,
        prior: context.conversationPrior,
        kept: context.conversationPriorKept,
        decay: context.conversationDecay,
        freeTurns: context.conversationFreeTurns,
      }),
  },
  timeWindowBoost<TurnHit>('by place', (hit, window) => insideTimeWindow(hit.at, window)),
  {
    kind: 'step',
    name: 'conversationCoverage',
    // Where the conversations were ranked (the prior's searches), after everything that moves
    // turns by their own merits, so that the first page stays as those ranked it.
    apply: (hits, context) =>
      context.conversationStandings && context.conversationPrior
        ? coverConversations(
            hits,
            context.conversationStandings,
            context.conversationCoverage,
            Math.max(context.conversationCoveragePage ?? CONVERSATION_COVERAGE_PAGE, context.conversationPriorKept ?? CONVERSATION_PRIOR_KEPT),
          )
        : [...hits],
  },
]);

/**
 * What `groupBy: "conversation"` does with the fused turns: group them into their conversations
 * (ranked by their best turns, `CONVERSATION_FUSION_WEIGHTS`), then favour by place a
 * conversation with a turn said inside the window, as a turn is.
 */
export const CONVERSATION_BOOSTS: GroupedRanking<TurnHit, RankedConversation<TurnHit>, TurnRankingContext> = Object.freeze({
  group: {
    name: 'conversation',
    apply: (hits: readonly TurnHit[], context: TurnRankingContext) => rankConversations(hits, { weights: context.conversationWeights }),
  },
  steps: [timeWindowBoost<RankedConversation<TurnHit>>('by place', (c, window) => c.turns.some((t) => insideTimeWindow(t.at, window)))],
});

/**
 * The analyzer as the turns corpus records it: its id names the turn keys' version too, so that
 * postings keyed another way are found stale and rebuilt at start like another analyzer's.
 */
export function turnKeysAnalyzer(analyzer: Analyzer): Analyzer {
  const suffix = `+turn-keys-${TURN_KEYS_VERSION}`;
  if (analyzer.id.endsWith(suffix)) return analyzer;
  return { id: `${analyzer.id}${suffix}`, analyze: (text) => analyzer.analyze(text), termFrequencies: (text) => analyzer.termFrequencies(text) };
}

/** Which turns a search looks at, within its tenant. */
export interface TurnFilter {
  agentId: string;
  /** One user's turns ('' for those of conversations without a user); absent: every user's. */
  userId?: string;
  /** Only this conversation's turns. */
  conversationId?: string;
  /** Every conversation's but this one's: a chat turn recalls from the others, its own being in its history. */
  excludeConversationId?: string;
  /** The moment the question is asked: turns said after it are left out. */
  asOf?: Date;
}

export function turnFilter(tenantId: string, filter: TurnFilter): CorpusFilter {
  const equals: Record<string, string> = { agentId: filter.agentId };
  if (filter.userId !== undefined) equals.userId = filter.userId;
  if (filter.conversationId !== undefined) equals.conversationId = filter.conversationId;
  const notEquals = filter.excludeConversationId === undefined ? undefined : { conversationId: filter.excludeConversationId };
  const base = corpusFilter(tenantId, {}, equals, notEquals);
  return filter.asOf === undefined ? base : { ...base, until: filter.asOf.toISOString() };
}
