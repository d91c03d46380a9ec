import { turns } from '../db/schema/index.js';
import { TURN_BM25 } from '../retrieval/bm25/bm25-index.js';
import type { Analyzer } from '../retrieval/bm25/analyzer.js';
import type { Corpus } from '../retrieval/corpus.js';
import { type CorpusFilter, corpusFilter } from '../retrieval/filter.js';
import { TURN_KEYS_VERSION } from './turn-record.js';

/** What to do when the BM25 index of turns was built by another analyzer. */
export const TURN_REINDEX_REMEDY = 'Restart the server: it re-indexes the turns at start (reindexStaleTurns).';

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
  reindexRemedy: TURN_REINDEX_REMEDY,
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
