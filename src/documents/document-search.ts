import { and, sql } from 'drizzle-orm';
import type { KnowledgeHit, KnowledgeRetriever } from '../retrieval/knowledge.js';
import { chunks, documents } from '../db/schema/index.js';
import { uuidArray } from '../db/sql-arrays.js';
import { asUrgentReads } from '../db/urgent-reads.js';
import { defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { type TagFilter, type TagFilterInput, corpusFilter } from '../retrieval/filter.js';
import { type FusionWeights, copyFusionWeights, fusionWeightsFor } from '../retrieval/fusion-weights.js';
import type { SignalRanks } from '../retrieval/signal.js';
import type { RankedUnit, TextCandidate, VectorCandidate } from '../retrieval/rank-units.js';
import { LexicalReranker } from '../retrieval/rerank/lexical-reranker.js';
import type { Reranker } from '../retrieval/rerank/reranker.js';
import { RERANKERS, type RerankerChoice } from '../retrieval/rerank/reranker-choice.js';
import { RerankerUnavailableError } from '../retrieval/rerank/reranker-unavailable-error.js';
import { type TenantCorpusOptions, createRetrievalEngine } from '../retrieval/retrieval-engine.js';
import type { SearchMode } from '../retrieval/search-mode.js';
import { makeSnippet } from '../retrieval/snippet.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { type TenantScoped, tenantScoped } from '../tenancy/tenant-scoped.js';
import { type PassageChunk, citedChunk } from './cited-chunk.js';
import { PASSAGE_CORPUS } from './passage-corpus.js';
import { passageText } from './passage-text.js';

export interface DocumentQueryOptions extends TagFilterInput {
  topK?: number;
  /**
   * Candidates each retriever returns before fusion and reranking; default max(50, topK). Hybrid
   * search ranks the union of both lists, so it can return up to twice this many.
   */
  candidateK?: number;
  mode?: SearchMode;
  reranker?: RerankerChoice;
  /** Overrides the configured fusion weights for this query. */
  weights?: FusionWeights;
  /** Each hit's whole passage as `passage`. */
  passages?: boolean;
  signal?: AbortSignal;
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
  ranks: SignalRanks;
  /** The reranker's score, when one was used; `score` stays the first stage's. */
  rerankScore?: number;
}

export interface DocumentSearch extends KnowledgeRetriever {
  search(query: string, options?: DocumentQueryOptions): Promise<SearchHit[]>;
  /** Chunks nearest to a vector in the embedder's space (each with its passage), filter applied inside the scan. */
  vectorCandidates(vector: number[], filter: TagFilter, limit: number): Promise<VectorCandidate[]>;
  /** Passages by BM25 over the postings, computed in the database; OR over the query's terms. */
  textCandidates(query: string, filter: TagFilter, limit: number): Promise<TextCandidate[]>;
  readonly weights: Readonly<FusionWeights>;
  /** The rerankers a query may name here: `cross-encoder` only when one was given. */
  readonly rerankers: readonly RerankerChoice[];
  /** Used when a query names none. */
  readonly defaultReranker: RerankerChoice;
}

export interface DocumentSearchOptions extends TenantCorpusOptions {
  /** The `lexical` choice; default a `LexicalReranker` over the same analyzer. */
  lexicalReranker?: Reranker;
  /** The `cross-encoder` choice; without one, asking for it throws RerankerUnavailableError. */
  crossEncoderReranker?: Reranker;
  /** The reranker of queries that name none. Default `none`. */
  defaultReranker?: RerankerChoice;
}

/** Document search as the application holds it: a tenant's search, and the settings every tenant shares. */
export type TenantDocumentSearch = TenantScoped<DocumentSearch> & Pick<DocumentSearch, 'weights' | 'rerankers' | 'defaultReranker'>;

export function createTenantDocumentSearch(options: Omit<DocumentSearchOptions, 'tenantId'>): TenantDocumentSearch {
  // Built once here, so a default reranker that cannot run still fails at start.
  const { weights, rerankers, defaultReranker } = createDocumentSearch(options);
  return { ...tenantScoped((tenantId) => createDocumentSearch({ ...options, tenantId })), weights, rerankers, defaultReranker };
}

type CitableChunk = Omit<SearchHit, 'score' | 'snippet' | 'ranks'> & PassageChunk & { passageId: string };

export function createDocumentSearch(options: DocumentSearchOptions): DocumentSearch {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const engine = createRetrievalEngine({ ...options, analyzer });
  const weights = Object.freeze(options.weights ? copyFusionWeights(options.weights) : fusionWeightsFor(options.embedder.id));
  const lexical = options.lexicalReranker ?? new LexicalReranker({ analyzer });
  const citing = new LexicalReranker({ analyzer });
  const rerankerByChoice: Partial<Record<RerankerChoice, Reranker>> = { lexical, 'cross-encoder': options.crossEncoderReranker };
  const rerankers = RERANKERS.filter((r) => r === 'none' || rerankerByChoice[r] !== undefined);
  const defaultReranker = options.defaultReranker ?? 'none';
  // Checked at start: a default that cannot run would fail every search that relies on it.
  if (!rerankers.includes(defaultReranker)) throw new RerankerUnavailableError(defaultReranker, rerankers);

  // The tenant goes inside both candidate queries, like the tags: before the LIMIT, never after.
  const filterOf = (tags: TagFilterInput) => corpusFilter(tenantId, tags);

  // A caller waits for these reads: see asUrgentReads.
  const search = (query: string, opts: DocumentQueryOptions = {}) => asUrgentReads(() => rankedHits(query, opts));

  async function rankedHits(query: string, opts: DocumentQueryOptions): Promise<SearchHit[]> {
    const topK = opts.topK ?? 10;
    const candidateK = Math.max(1, opts.candidateK ?? Math.max(50, topK));
    const mode = opts.mode ?? 'hybrid';
    opts.signal?.throwIfAborted();
    const choice = opts.reranker ?? defaultReranker;
    const reranker = choice === 'none' ? undefined : rerankerByChoice[choice];
    if (choice !== 'none' && !reranker) throw new RerankerUnavailableError(choice, rerankers);

    const passages = await engine.search(PASSAGE_CORPUS, query, {
      mode,
      filter: filterOf(opts),
      topK,
      candidateK,
      weights: opts.weights ?? weights,
      signal: opts.signal,
    });

    const wanted = reranker ? passages.slice(0, candidateK) : passages.slice(0, topK);
    const chunksOf = await passageChunks(wanted.map((p) => p.id));
    const queryTerms = new Set(analyzer.analyze(query));
    let hits: SearchHit[] = wanted.flatMap((p: RankedUnit) => {
      const members = chunksOf.get(p.id) ?? [];
      const cited = citedChunk(query, mode, p, members, citing);
      // A passage deleted between the candidate query and this one is left out.
      if (!cited) return [];
      const { passageId: _passageId, ...chunk } = cited;
      return [
        {
          ...chunk,
          score: p.score,
          snippet: makeSnippet(chunk.text, queryTerms, analyzer),
          ranks: p.ranks,
          ...(opts.passages ? { passage: passageText(members) } : {}),
        },
      ];
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
  async function passageChunks(passageIds: string[]): Promise<Map<string, CitableChunk[]>> {
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
    const byPassage = new Map<string, CitableChunk[]>();
    for (const row of rows) {
      const list = byPassage.get(row.passageId);
      if (list) list.push(row);
      else byPassage.set(row.passageId, [row]);
    }
    return byPassage;
  }

  return {
    search,
    vectorCandidates: (vector, filter, limit) => engine.vectorCandidates(PASSAGE_CORPUS, vector, { tenantId, equals: {}, tags: filter }, limit),
    textCandidates: (query, filter, limit) => engine.textCandidates(PASSAGE_CORPUS, query, { tenantId, equals: {}, tags: filter }, limit),
    weights,
    rerankers,
    defaultReranker,
  };
}
