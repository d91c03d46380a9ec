import { type SQL, and, sql } from 'drizzle-orm';
import type { KnowledgeHit, KnowledgeRetriever } from '../chat/knowledge-retriever.js';
import type { Db } from '../db/database.js';
import { type VectorScanOptions, filteredVectorSearch } from '../db/filtered-vector-search.js';
import { queryRows } from '../db/query-rows.js';
import { chunks, documents } from '../db/schema.js';
import { textArray, intArray, uuidArray, vectorParam } from '../db/sql-arrays.js';
import { type TagFilter, tagConditions } from '../db/tag-filter.js';
import type { Embedder } from '../embeddings/embedder.js';
import { normalizeTags } from '../memory/tags.js';
import { type Analyzer, defaultAnalyzer } from './bm25/analyzer.js';
import { type Bm25Params, DEFAULT_BM25_PARAMS } from './bm25/bm25.js';
import { AnalyzerMismatchError } from './document-store.js';
import { fuse } from './fusion.js';
import { LexicalReranker } from './rerank/lexical-reranker.js';
import type { Reranker } from './rerank/reranker.js';
import { makeSnippet } from './snippet.js';

export const SEARCH_MODES = ['hybrid', 'vector', 'text'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
export const RERANKERS = ['none', 'lexical'] as const;
export type RerankerChoice = (typeof RERANKERS)[number];

/** How much each retriever counts in weighted RRF; `k` is RRF's rank offset (default 60). */
export interface FusionWeights {
  vector: number;
  text: number;
  k?: number;
}

/**
 * Fusion weights per embedder, from `npm run calibrate` on SciFact's training split
 * (scripts/calibrate.ts). The bundled USE-lite is a weak retriever on its own there (nDCG@10
 * about 0.2 against BM25's 0.7), so BM25 must dominate: at 1:1 the fused ranking loses a third
 * of BM25's quality, while a small vector weight still breaks BM25's ties and adds recall.
 */
export const FUSION_WEIGHTS_BY_EMBEDDER: Readonly<Record<string, FusionWeights>> = Object.freeze({
  'bundled:use-lite': { vector: 0.1, text: 1 },
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

export interface SearchHit extends KnowledgeHit {
  chunkIndex: number;
  /** The part of the chunk around the first query term, with `…` where it was cut. */
  snippet: string;
  /** 1-based rank of the chunk in each retriever's candidates, null where it was not among them. */
  ranks: { vector: number | null; text: number | null };
  /** The reranker's score, when one was used; `score` stays the first stage's. */
  rerankScore?: number;
}

export interface Candidate {
  id: string;
  score: number;
}

export interface KnowledgeSearch extends KnowledgeRetriever {
  search(query: string, options?: KnowledgeQueryOptions): Promise<SearchHit[]>;
  /** Chunks nearest to a vector in the embedder's space, filter applied inside the scan. */
  vectorCandidates(vector: number[], filter: TagFilter, limit: number): Promise<Candidate[]>;
  /** Chunks by BM25 over the postings, computed in the database; OR over the query's terms. */
  textCandidates(query: string, filter: TagFilter, limit: number): Promise<Candidate[]>;
  readonly weights: Readonly<FusionWeights>;
}

export interface KnowledgeSearchOptions extends VectorScanOptions {
  db: Db;
  embedder: Embedder;
  analyzer?: Analyzer;
  bm25?: Bm25Params;
  /** Default: `fusionWeightsFor(embedder.id)`. */
  weights?: FusionWeights;
  /** The `lexical` choice; default a `LexicalReranker` over the same analyzer. */
  lexicalReranker?: Reranker;
}

export function createKnowledgeSearch(options: KnowledgeSearchOptions): KnowledgeSearch {
  const { db, embedder } = options;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const bm25 = options.bm25 ?? DEFAULT_BM25_PARAMS;
  const weights = Object.freeze({ ...(options.weights ?? fusionWeightsFor(embedder.id)) });
  const lexical = options.lexicalReranker ?? new LexicalReranker({ analyzer });

  const filterSql = (filter: TagFilter): SQL => and(sql`true`, ...tagConditions(chunks.tags, filter))!;

  async function vectorCandidates(vector: number[], filter: TagFilter, limit: number): Promise<Candidate[]> {
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
            .select({ id: chunks.id, distance: sql<number>`${distance}` })
            .from(chunks)
            .where(and(where, sql`${chunks.embedding} IS NOT NULL`))
            .orderBy(distance)
            .limit(n),
      },
      options,
    );
    return rows
      .map((r) => ({ id: r.id, score: 1 - Number(r.distance) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, limit);
  }

  async function textCandidates(query: string, filter: TagFilter, limit: number): Promise<Candidate[]> {
    const counts = new Map<string, number>();
    for (const term of analyzer.analyze(query)) counts.set(term, (counts.get(term) ?? 0) + 1);
    if (counts.size === 0 || limit <= 0) return [];
    const [stats] = await queryRows<{ analyzer_id: string; total_chunks: string | number }>(
      db,
      sql`SELECT analyzer_id, total_chunks FROM corpus_stats WHERE id = 1`,
    );
    if (!stats || Number(stats.total_chunks) === 0) return [];
    if (stats.analyzer_id !== analyzer.id) throw new AnalyzerMismatchError(stats.analyzer_id, analyzer.id);

    const terms = [...counts.keys()];
    const k1 = sql`${bm25.k1}::float8`;
    const b = sql`${bm25.b}::float8`;
    // bm25.ts's formula, term for term: Lucene's idf times the saturated, length-normalised tf,
    // a term repeated in the query counting each time.
    const rows = await queryRows<{ id: string; score: number | string }>(
      db,
      sql`SELECT p.chunk_id::text AS id,
          SUM(q.qtf * ln(1 + (s.total_chunks - t.df + 0.5::float8) / (t.df + 0.5::float8))
                    * p.tf * (${k1} + 1) / (p.tf + ${k1} * (1 - ${b} + ${b} * ${chunks.bm25Length} / (s.total_length::float8 / s.total_chunks)))) AS score
        FROM unnest(${textArray(terms)}, ${intArray(terms.map((t) => counts.get(t)!))}) AS q(term, qtf)
        JOIN term_stats t ON t.term = q.term
        JOIN postings p ON p.term = q.term
        JOIN ${chunks} ON ${chunks.id} = p.chunk_id
        CROSS JOIN corpus_stats s
        WHERE s.id = 1 AND ${filterSql(filter)}
        GROUP BY p.chunk_id
        ORDER BY score DESC, p.chunk_id
        LIMIT ${limit}`,
    );
    return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
  }

  async function search(query: string, opts: KnowledgeQueryOptions = {}): Promise<SearchHit[]> {
    const topK = opts.topK ?? 10;
    const candidateK = Math.max(1, opts.candidateK ?? Math.max(50, topK));
    const mode = opts.mode ?? 'hybrid';
    const filter: TagFilter = { tagsAny: normalizeTags(opts.tagsAny), tagsAll: normalizeTags(opts.tagsAll), tagsNone: normalizeTags(opts.tagsNone) };
    opts.signal?.throwIfAborted();

    const vectorSide = async () => {
      const [vector] = await embedder.embed([query], opts.signal ? { signal: opts.signal } : {});
      if (!vector) throw new Error(`embedder ${embedder.id} returned no vector`);
      return vectorCandidates(vector, filter, candidateK);
    };
    // One after the other: on PGlite the vector search's transaction holds the only connection.
    const vectorHits = mode === 'text' ? [] : await vectorSide();
    const textHits = mode === 'vector' ? [] : await textCandidates(query, filter, candidateK);

    const vectorRanks = new Map(vectorHits.map((h, i) => [h.id, i + 1]));
    const textRanks = new Map(textHits.map((h, i) => [h.id, i + 1]));
    let ranked: Candidate[];
    if (mode === 'hybrid') {
      const w = opts.weights ?? weights;
      ranked = fuse(
        [
          { ids: vectorHits.map((h) => h.id), weight: w.vector },
          { ids: textHits.map((h) => h.id), weight: w.text },
        ],
        w.k ?? 60,
      ).map((h) => ({ id: h.id, score: h.score }));
    } else {
      ranked = mode === 'vector' ? vectorHits : textHits;
    }

    const reranking = (opts.reranker ?? 'none') === 'lexical';
    const wanted = reranking ? ranked.slice(0, candidateK) : ranked.slice(0, topK);
    const details = await chunkDetails(wanted.map((h) => h.id));
    const queryTerms = new Set(analyzer.analyze(query));
    let hits: SearchHit[] = wanted.flatMap((h) => {
      const d = details.get(h.id);
      // A chunk deleted between the candidate query and this one is left out.
      if (!d) return [];
      return [
        {
          ...d,
          score: h.score,
          snippet: makeSnippet(d.text, queryTerms, analyzer),
          ranks: { vector: vectorRanks.get(h.id) ?? null, text: textRanks.get(h.id) ?? null },
        },
      ];
    });
    if (reranking) {
      const reranked = await lexical.rerank(
        query,
        hits.map((h) => ({ ...h, id: h.chunkId })),
        topK,
      );
      hits = reranked.map(({ id: _id, ...h }) => h);
    }
    return hits.slice(0, topK);
  }

  async function chunkDetails(ids: string[]): Promise<Map<string, Omit<SearchHit, 'score' | 'snippet' | 'ranks'>>> {
    if (ids.length === 0) return new Map();
    const rows = await db
      .select({
        chunkId: chunks.id,
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
      .where(sql`${chunks.id} = ANY(${uuidArray(ids)})`);
    return new Map(rows.map((r) => [r.chunkId, r]));
  }

  return { search, vectorCandidates, textCandidates, weights };
}
