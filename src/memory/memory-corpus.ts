import { memories } from '../db/schema/index.js';
import { MEMORY_BM25 } from '../retrieval/bm25/bm25-index-tables.js';
import type { Corpus } from '../retrieval/corpus.js';
import type { Reordering } from '../retrieval/boost.js';
import { type CorpusFilter, corpusFilter } from '../retrieval/filter.js';
import { type TimeWindowContext, insideTimeWindow, timeWindowBoost } from '../retrieval/time-window-boost.js';
import { DEFAULT_AGENT_ID, type MemoryFilter, type MemorySearchHit } from './memory-types.js';

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
  filters: {
    tenantId: memories.tenantId,
    tags: memories.tags,
    equals: { agentId: memories.agentId, userId: memories.userId, status: memories.status },
    metadata: memories.metadata,
    validTo: memories.validTo,
    expiresAt: memories.expiresAt,
    at: memories.createdAt,
    changedAt: memories.updatedAt,
    validFrom: memories.validFrom,
    validUntil: memories.validUntil,
  },
  // Kept by migration 0009's triggers: an agent's memories, and an agent's with one user's.
  filterStats: {
    table: 'memories',
    scopes: (filter: CorpusFilter) => {
      const { agentId: agent, status, ...rest } = filter.equals;
      // Quarantined memories are few: leaving them out does not change a scope's size enough to count.
      const others = status === 'quarantined' || Object.keys(rest).length !== 0 || Object.keys(filter.notEquals ?? {}).length > 0;
      if (agent === undefined || others || Object.keys(filter.oneOf ?? {}).some((k) => k !== 'userId')) return null;
      const users = filter.oneOf?.userId;
      return users ? users.map((user) => `${agent}\u001f${user}`) : [agent];
    },
  },
  reindexRemedy: MEMORY_REINDEX_REMEDY,
});

/**
 * What re-orders the memories a search fused: those created inside the query's time window, by
 * score (TIME_WINDOW_BOOST).
 */
export const MEMORY_BOOSTS: readonly Reordering<MemorySearchHit, TimeWindowContext>[] = Object.freeze([
  timeWindowBoost<MemorySearchHit>('by score', (hit, window) => insideTimeWindow(hit.memory.createdAt, window)),
]);

/** The stored form of a user id: '' for the agent's shared memories. */
export const storedUserId = (userId: string | null | undefined): string => userId ?? '';

/**
 * A memory filter as the corpus applies it: the store's tenant, the agent (default `default`),
 * the user (absent: every user's; '' the shared memories only; an id that user's, and with
 * `includeShared` the shared ones too), live memories unless `includeInvalid`, active ones unless
 * `includeQuarantined` or `status` says otherwise, facts valid at `validAt` (default now), tags and metadata.
 */
export function memoryFilter(tenantId: string, filter: MemoryFilter = {}): CorpusFilter {
  const { userId } = filter;
  const users = userId === undefined ? undefined : filter.includeShared && userId !== '' ? ['', userId] : [userId];
  return {
    ...corpusFilter(tenantId, filter, { agentId: filter.agentId ?? DEFAULT_AGENT_ID, ...statusEquals(filter) }),
    ...(users ? { oneOf: { userId: users } } : {}),
    metadata: filter.metadata,
    includeInvalid: filter.includeInvalid,
    validAt: filter.validAt?.toISOString() ?? 'now',
  };
}

function statusEquals(filter: MemoryFilter): { status?: string } {
  if (filter.status) return { status: filter.status };
  return filter.includeQuarantined ? {} : { status: 'active' };
}
