import { type SQL, and, sql } from 'drizzle-orm';
import type { KnowledgeHit, KnowledgeRetriever } from '../chat/knowledge-retriever.js';
import type { Db } from '../db/database.js';
import { type VectorScanOptions, filteredVectorSearch } from '../db/filtered-vector-search.js';
import { CHUNK_BM25, bm25Candidates, queryTermCounts, readBm25Corpus } from '../db/bm25-index.js';
import { chunks, documents } from '../db/schema.js';
import { uuidArray, vectorParam } from '../db/sql-arrays.js';
import { type TagFilter, tagConditions } from '../db/tag-filter.js';
import type { Embedder } from '../embeddings/embedder.js';
import { normalizeTags } from '../retrieval/tags.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { type Bm25Params, DEFAULT_BM25_PARAMS } from '../retrieval/bm25/bm25.js';
import { AnalyzerMismatchError } from './document-store.js';
import { type ChunkCandidate, type PassageCandidate, type RankedPassage, citedChunk, rankPassages } from './passage-ranking.js';
import { LexicalReranker } from '../retrieval/rerank/lexical-reranker.js';
import type { Reranker } from '../retrieval/rerank/reranker.js';
import { RERANKERS, type RerankerChoice } from '../retrieval/rerank/reranker-choice.js';
import { RerankerUnavailableError } from '../retrieval/rerank/reranker-unavailable-error.js';
import { makeSnippet } from '../retrieval/snippet.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { type TenantScoped, tenantScoped } from '../tenancy/tenant-scoped.js';

export const SEARCH_MODES = ['hybrid', 'vector', 'text'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
export { RERANKERS, type RerankerChoice };

/** How much each retriever counts in weighted RRF; `k` is RRF's rank offset (default 60). */
export interface FusionWeights {
  vector: number;
  text: number;
  k?: number;
}

/**
 * Fusion weights per embedder, from `npm run calibrate` on SciFact's training split
 * (scripts/calibrate.ts). The bundled USE-lite is a weak retriever on its own there (nDCG@10
 * 0.283 against BM25's 0.697 on passages), so BM25 must dominate: vector 0.1 already scores below
 * BM25 and 1:1 loses a fifth of it; 0.05 at k 20 (0.698) is the sweep's best and mostly breaks
 * BM25's near-ties.
 */
export const FUSION_WEIGHTS_BY_EMBEDDER: Readonly<Record<string, FusionWeights>> = Object.freeze({
  'bundled:use-lite': { vector: 0.05, text: 1, k: 20 },
});

/** For embedders not calibrated yet: BM25 still leads; run `npm run calibrate` for a better value. */
export const DEFAULT_FUSION_WEIGHTS: Readonly<FusionWeights> = Object.freeze({ vector: 0.5, text: 1 });

export function fusionWeightsFor(embedderId: string): FusionWeights {
  return { ...(FUSION_WEIGHTS_BY_EMBEDDER[embedderId] ?? DEFAULT_FUSION_WEIGHTS) };
}

export interface KnowledgeQueryOptions {
  topK?: number | undefined;
  /**
   * Candidates each retriever returns before fusion and reranking; default max(50, topK). Hybrid
   * search ranks the union of both lists, so it can return up to twice this many.
   */
  candidateK?: number | undefined;
  mode?: SearchMode | undefined;
  reranker?: RerankerChoice | undefined;
  /** Overrides the configured fusion weights for this query. */
  weights?: FusionWeights | undefined;
  tagsAny?: readonly string[] | undefined;
  tagsAll?: readonly string[] | undefined;
  tagsNone?: readonly string[] | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * One hit per passage (consecutive chunks BM25 indexes together), citing the chunk of it that
 * best answers the query.
 */
export interface SearchHit extends KnowledgeHit {
  chunkIndex: number;
  /** The part of the chunk around the first query term, with `…` where it was cut. */
  snippet: string;
  /** 1-based rank of the chunk's passage in each retriever's candidates, null where it was not among them. */
  ranks: { vector: number | null; text: number | null };
  /** The reranker's score, when one was used; `score` stays the first stage's. */
  rerankScore?: number;
}

export type { ChunkCandidate, PassageCandidate };

export interface KnowledgeSearch extends KnowledgeRetriever {
  search(query: string, options?: KnowledgeQueryOptions): Promise<SearchHit[]>;
  /** Chunks nearest to a vector in the embedder's space, filter applied inside the scan. */
  vectorCandidates(vector: number[], filter: TagFilter, limit: number): Promise<ChunkCandidate[]>;
  /** Passages by BM25 over the postings, computed in the database; OR over the query's terms. */
  textCandidates(query: string, filter: TagFilter, limit: number): Promise<PassageCandidate[]>;
  readonly weights: Readonly<FusionWeights>;
  /** The rerankers a query may name here: `cross-encoder` only when one was given. */
  readonly rerankers: readonly RerankerChoice[];
  /** Used when a query names none. */
  readonly defaultReranker: RerankerChoice;
}

export interface KnowledgeSearchOptions extends VectorScanOptions {
  db: Db;
  embedder: Embedder;
  /** The tenant whose chunks this search ranks, and only those. Default `default`. */
  tenantId?: string;
  analyzer?: Analyzer;
  bm25?: Bm25Params;
  /** Default: `fusionWeightsFor(embedder.id)`. */
  weights?: FusionWeights;
  /** The `lexical` choice; default a `LexicalReranker` over the same analyzer. */
  lexicalReranker?: Reranker;
  /** The `cross-encoder` choice; without one, asking for it throws RerankerUnavailableError. */
  crossEncoderReranker?: Reranker | undefined;
  /** The reranker of queries that name none. Default `none`. */
  defaultReranker?: RerankerChoice | undefined;
}

/** Knowledge search as the application holds it: a tenant's search, and the settings every tenant shares. */
export type TenantKnowledgeSearch = TenantScoped<KnowledgeSearch> & Pick<KnowledgeSearch, 'weights' | 'rerankers' | 'defaultReranker'>;

export function createTenantKnowledgeSearch(options: Omit<KnowledgeSearchOptions, 'tenantId'>): TenantKnowledgeSearch {
  // Built once here, so a default reranker that cannot run still fails at start.
  const { weights, rerankers, defaultReranker } = createKnowledgeSearch(options);
  return { ...tenantScoped((tenantId) => createKnowledgeSearch({ ...options, tenantId })), weights, rerankers, defaultReranker };
}

/** How many more chunks the vector side fetches when its first candidateK fall in fewer than topK passages. */
const VECTOR_WIDENING = 4;
/**
 * The HNSW candidate list of a chunk search, at least: the chunks' graph is built sparse (m 8) for
 * cheap inserts, and a wider search makes up for it. On all of SciFact (`npm run bench:hnsw`), 400
 * finds 99.05% of the exact 10 nearest chunks (99.55% on pgvector's default graph searched with
 * 200), in 14.2 ms instead of 10.4.
 */
const CHUNK_EF_SEARCH = 400;

const passagesIn = (hits: readonly ChunkCandidate[]): number => new Set(hits.map((h) => h.passageId)).size;

/** The hits up to the last chunk of the first `passages` passages. */
function withinPassages(hits: readonly ChunkCandidate[], passages: number): ChunkCandidate[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    if (seen.has(h.passageId)) return true;
    if (seen.size >= passages) return false;
    seen.add(h.passageId);
    return true;
  });
}

export function createKnowledgeSearch(options: KnowledgeSearchOptions): KnowledgeSearch {
  const { db, embedder } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const bm25 = options.bm25 ?? DEFAULT_BM25_PARAMS;
  const weights = Object.freeze({ ...(options.weights ?? fusionWeightsFor(embedder.id)) });
  const lexical = options.lexicalReranker ?? new LexicalReranker({ analyzer });
  const citing = new LexicalReranker({ analyzer });
  const rerankerByChoice: Partial<Record<RerankerChoice, Reranker>> = { lexical, 'cross-encoder': options.crossEncoderReranker };
  const rerankers = RERANKERS.filter((r) => r === 'none' || rerankerByChoice[r] !== undefined);
  const defaultReranker = options.defaultReranker ?? 'none';
  // Checked at start: a default that cannot run would fail every search that relies on it.
  if (!rerankers.includes(defaultReranker)) throw new RerankerUnavailableError(defaultReranker, rerankers);

  // The tenant goes inside both candidate queries, like the tags: before the LIMIT, never after.
  const filterSql = (filter: TagFilter): SQL => and(sql`${chunks.tenantId} = ${tenantId}`, ...tagConditions(chunks.tags, filter))!;

  async function vectorCandidates(vector: number[], filter: TagFilter, limit: number): Promise<ChunkCandidate[]> {
    if (vector.length !== embedder.dimensions) {
      throw new RangeError(`query vector has ${vector.length} dimensions; the store holds ${embedder.dimensions}`);
    }
    const where = filterSql(filter);
    const distance = sql`${chunks.embedding} <=> ${vectorParam(vector)}`;
    const rows = await filteredVectorSearch(
      db,
      {
        table: chunks,
        where,
        limit,
        ranked: (tx, n) =>
          tx
            .select({ id: chunks.id, passageId: chunks.passageId, distance: sql<number>`${distance}` })
            .from(chunks)
            .where(and(where, sql`${chunks.embedding} IS NOT NULL`))
            .orderBy(distance)
            .limit(n),
      },
      { ...options, efSearch: options.efSearch ?? CHUNK_EF_SEARCH },
    );
    return rows
      .map((r) => ({ id: r.id, passageId: r.passageId, score: 1 - Number(r.distance) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, limit);
  }

  async function textCandidates(query: string, filter: TagFilter, limit: number): Promise<PassageCandidate[]> {
    const terms = queryTermCounts(analyzer.analyze(query));
    if (terms.size === 0 || limit <= 0) return [];
    const stats = await readBm25Corpus(db, CHUNK_BM25, tenantId);
    if (!stats || stats.total === 0) return [];
    if (stats.analyzerId !== analyzer.id) throw new AnalyzerMismatchError(stats.analyzerId, analyzer.id);
    // Postings belong to each passage's first chunk, so the chunk ids found are the passages'.
    return bm25Candidates(db, CHUNK_BM25, tenantId, {
      terms,
      table: chunks,
      idColumn: chunks.id,
      lengthColumn: chunks.bm25Length,
      where: filterSql(filter),
      limit,
      params: bm25,
    });
  }

  async function search(query: string, opts: KnowledgeQueryOptions = {}): Promise<SearchHit[]> {
    const topK = opts.topK ?? 10;
    const candidateK = Math.max(1, opts.candidateK ?? Math.max(50, topK));
    const mode = opts.mode ?? 'hybrid';
    const filter: TagFilter = { tagsAny: normalizeTags(opts.tagsAny), tagsAll: normalizeTags(opts.tagsAll), tagsNone: normalizeTags(opts.tagsNone) };
    opts.signal?.throwIfAborted();
    const choice = opts.reranker ?? defaultReranker;
    const reranker = choice === 'none' ? undefined : rerankerByChoice[choice];
    if (choice !== 'none' && !reranker) throw new RerankerUnavailableError(choice, rerankers);

    const vectorSide = async () => {
      const [vector] = await embedder.embed([query], opts.signal ? { signal: opts.signal } : {});
      if (!vector) throw new Error(`embedder ${embedder.id} returned no vector`);
      const hits = await vectorCandidates(vector, filter, candidateK);
      // candidateK chunks may fall in fewer than topK passages, and a hit is a passage: widen once,
      // so vector mode still returns topK hits when topK = candidateK. Only then: a wider HNSW
      // search costs several times as much.
      if (hits.length < candidateK || passagesIn(hits) >= topK) return hits;
      return withinPassages(await vectorCandidates(vector, filter, candidateK * VECTOR_WIDENING), candidateK);
    };
    // One after the other: on PGlite the vector search's transaction holds the only connection.
    const vectorHits = mode === 'text' ? [] : await vectorSide();
    const textHits = mode === 'vector' ? [] : await textCandidates(query, filter, candidateK);

    const passages = rankPassages(mode, vectorHits, textHits, opts.weights ?? weights);

    const wanted = reranker ? passages.slice(0, candidateK) : passages.slice(0, topK);
    const chunksOf = await passageChunks(wanted.map((p) => p.passageId));
    const queryTerms = new Set(analyzer.analyze(query));
    let hits: SearchHit[] = wanted.flatMap((p: RankedPassage) => {
      const cited = citedChunk(query, mode, p, chunksOf.get(p.passageId) ?? [], citing);
      // A passage deleted between the candidate query and this one is left out.
      if (!cited) return [];
      const { passageId: _passageId, ...chunk } = cited;
      return [{ ...chunk, score: p.score, snippet: makeSnippet(chunk.text, queryTerms, analyzer), ranks: p.ranks }];
    });
    if (reranker) {
      const reranked = await reranker.rerank(
        query,
        hits.map((h) => ({ ...h, id: h.chunkId })),
        topK,
        { signal: opts.signal },
      );
      hits = reranked.map(({ id: _id, ...h }) => h);
    }
    return hits.slice(0, topK);
  }

  /** The chunks of these passages, by passage, in document order. */
  async function passageChunks(passageIds: string[]): Promise<Map<string, (Omit<SearchHit, 'score' | 'snippet' | 'ranks'> & { passageId: string })[]>> {
    if (passageIds.length === 0) return new Map();
    const rows = await db
      .select({
        chunkId: chunks.id,
        passageId: chunks.passageId,
        documentId: chunks.documentId,
        title: documents.title,
        chunkIndex: chunks.index,
        headingPath: chunks.headingPath,
        start: chunks.start,
        end: chunks.end,
        text: chunks.text,
      })
      .from(chunks)
      .innerJoin(documents, sql`${documents.id} = ${chunks.documentId}`)
      .where(and(sql`${chunks.tenantId} = ${tenantId}`, sql`${documents.tenantId} = ${tenantId}`, sql`${chunks.passageId} = ANY(${uuidArray(passageIds)})`))
      .orderBy(chunks.passageId, chunks.index);
    const byPassage = new Map<string, typeof rows>();
    for (const row of rows) {
      const list = byPassage.get(row.passageId);
      if (list) list.push(row);
      else byPassage.set(row.passageId, [row]);
    }
    return byPassage;
  }

  return { search, vectorCandidates, textCandidates, weights, rerankers, defaultReranker };
}
