import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { queryRows } from '../db/query-rows.js';
import { textArray } from '../db/sql-arrays.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { Analyzer } from '../retrieval/bm25/analyzer.js';
import { readBm25Corpus } from '../retrieval/bm25/bm25-corpus.js';
import { type Bm25CorpusStats, type Bm25Params, DEFAULT_BM25_PARAMS, bm25Score } from '../retrieval/bm25/bm25.js';
import { createCorpusIndex } from '../retrieval/corpus-index.js';
import type { CorpusFilter } from '../retrieval/filter.js';
import type { FusionWeights } from '../retrieval/fusion-weights.js';
import { cosine } from '../util/cosine.js';
import { hybridCandidates } from '../retrieval/hybrid-candidates.js';
import type { TextCandidate, VectorCandidate } from '../retrieval/rank-units.js';
import type { Payload, RetrievalEngine } from '../retrieval/retrieval-engine.js';
import type { SearchMode } from '../retrieval/search-mode.js';
import { type MemoryVersion, readVersions } from './memory-as-of.js';
import { MEMORY_CORPUS } from './memory-corpus.js';
import { type MemoryRow, toMemory } from './memory-rows.js';
import type { Memory, MemorySearchHit } from './memory-types.js';

/**
 * At most this many changed memories are embedded for one search: past it, the rest are found by
 * their words only. Today's vectors serve every memory whose words have not changed since.
 */
export const AS_OF_EMBED_LIMIT = 256;

export interface AsOfSearchOptions {
  mode: SearchMode;
  filter: CorpusFilter;
  asOf: Date;
  topK: number;
  weights: FusionWeights;
  minScore?: number;
  vector?: number[];
}

export interface AsOfSearchDeps {
  db: Db;
  engine: RetrievalEngine;
  embedder: Embedder;
  analyzer: Analyzer;
  payload: Payload;
  bm25?: Bm25Params;
}

/**
 * A search of the memories as they were at `asOf`, ranked by what they said then. The memories
 * unchanged since are ranked by the indexes as today (both sides, filter inside); the ones that
 * changed or went since are read from their history and scored here the same way: BM25 with the
 * tenant's statistics, cosine with today's vector where the words are the same and a fresh one
 * where they are not. The engine merges them by score into each side's candidates and fuses
 * them as any search.
 */
export async function searchMemoriesAsOf(deps: AsOfSearchDeps, query: string, opts: AsOfSearchOptions): Promise<MemorySearchHit[]> {
  const { db, engine, payload } = deps;
  const { mode, filter, topK } = opts;
  const asOf = opts.asOf.toISOString();
  const candidateK = mode === 'hybrid' ? hybridCandidates(topK) : topK;
  // Made before the search: the changed versions' similarities are read with it.
  const vector = mode === 'text' ? undefined : (opts.vector ?? (await engine.embedQuery(query)));
  let read: Promise<MemoryVersion[]> | undefined;
  const changed = () => (read ??= readVersions(db, { filter, asOf: opts.asOf, changedOnly: true, ...(vector ? { vector } : {}) }));
  const versions = new Map<string, Memory>();

  const changedVector = async (queryVector: number[]): Promise<VectorCandidate[]> => {
    const found = await changed();
    const toEmbed = found.filter((v) => !v.sameContent).slice(0, AS_OF_EMBED_LIMIT);
    const fresh = toEmbed.length ? await deps.embedder.embed(toEmbed.map((v) => v.memory.content)) : [];
    const freshScore = new Map(toEmbed.map((v, i) => [v.memoryId, cosine(queryVector, fresh[i]!)]));
    return found.flatMap((v) => {
      const score = v.sameContent ? v.similarity : freshScore.get(v.memoryId);
      return score === undefined || score === null ? [] : [{ id: v.memoryId, unitId: v.memoryId, score }];
    });
  };
  const changedText = async (): Promise<TextCandidate[]> =>
    scoreBm25(
      deps,
      filter.tenantId,
      query,
      (await changed()).map((v) => ({ id: v.memoryId, text: v.memory.content })),
    );

  const ranked = await engine.search(MEMORY_CORPUS, query, {
    mode,
    // The indexes hold today's rows: only those unchanged since asOf are as they were then.
    filter: { ...filter, until: asOf, unchangedAfter: asOf },
    topK,
    candidateK,
    weights: opts.weights,
    payload,
    ...(vector ? { vector } : {}),
    ...(opts.minScore !== undefined ? { minScore: opts.minScore } : {}),
    supplement: { vector: changedVector, text: changedText },
    repairVectorOrder: true,
  });
  for (const v of read ? await read : []) versions.set(v.memoryId, v.memory);
  return ranked.slice(0, topK).flatMap((h) => {
    const memory: Memory | undefined = versions.get(h.id) ?? (h.row ? toMemory(h.row as MemoryRow) : undefined);
    return memory ? [{ memory, score: h.score, ranks: h.ranks }] : [];
  });
}

/** BM25 of texts not in the index, with the tenant's statistics: the same score the index would give them. */
async function scoreBm25(deps: AsOfSearchDeps, tenantId: string, query: string, texts: readonly { id: string; text: string }[]): Promise<TextCandidate[]> {
  const queryTerms = deps.analyzer.analyze(query);
  if (queryTerms.length === 0 || texts.length === 0) return [];
  const stats = await readBm25Corpus(deps.db, MEMORY_CORPUS.bm25, tenantId);
  const dfRows = await queryRows<{ term: string; df: number }>(
    deps.db,
    sql`SELECT term, df FROM ${sql.identifier(MEMORY_CORPUS.bm25.termStats)} WHERE tenant_id = ${tenantId} AND term = ANY(${textArray([...new Set(queryTerms)])})`,
  );
  const df = new Map(dfRows.map((r) => [r.term, Number(r.df)]));
  const corpus: Bm25CorpusStats = {
    documentCount: Math.max(stats?.total ?? 0, 1),
    averageDocumentLength: stats && stats.total > 0 ? stats.totalLength / stats.total : 1,
    documentFrequency: (term) => df.get(term) ?? 0,
  };
  const index = createCorpusIndex(MEMORY_CORPUS, deps.analyzer);
  return texts.flatMap(({ id, text }) => {
    const score = bm25Score(queryTerms, index.termsOf(text), corpus, deps.bm25 ?? DEFAULT_BM25_PARAMS);
    return score > 0 ? [{ id, score }] : [];
  });
}
