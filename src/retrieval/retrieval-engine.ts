import { Column, SQL, is, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../db/database.js';
import { readsRunConcurrently } from '../db/concurrent-reads.js';
import { type VectorScanOptions, filteredVectorSearch } from '../db/filtered-vector-search.js';
import { textArray } from '../db/sql-arrays.js';
import type { Embedder } from '../embeddings/embedder.js';
import { AnalyzerMismatchError } from './analyzer-mismatch-error.js';
import { type Analyzer, defaultAnalyzer } from './bm25/analyzer.js';
import { bm25Candidates, queryTermCounts } from './bm25/bm25-candidates.js';
import { readBm25Corpus } from './bm25/bm25-corpus.js';
import { type Bm25Params, DEFAULT_BM25_PARAMS } from './bm25/bm25.js';
import type { Corpus } from './corpus.js';
import type { CorpusFilter } from './filter.js';
import { filterToSql } from './filter-sql.js';
import type { FusionWeights } from './fusion-weights.js';
import { type RankedUnit, type TextCandidate, type VectorCandidate, rankUnits, unitsIn, withinUnits } from './rank-units.js';
import type { SearchMode } from './search-mode.js';
import {
  MEMRAG_RETRIEVAL_CANDIDATE_K,
  MEMRAG_RETRIEVAL_CORPUS,
  MEMRAG_RETRIEVAL_FUSED_ROWS,
  MEMRAG_RETRIEVAL_MODE,
  MEMRAG_RETRIEVAL_TEXT_ROWS,
  MEMRAG_RETRIEVAL_TOP_K,
  MEMRAG_RETRIEVAL_VECTOR_ROWS,
  withSpan,
} from '../observability/tracing.js';

export interface RetrievalEngineOptions extends VectorScanOptions {
  db: Db;
  embedder: Embedder;
  /** Must be the analyzer that indexed the corpora searched (checked against their statistics). */
  analyzer?: Analyzer;
  bm25?: Bm25Params;
}

/** What a store or search over one tenant's part of a corpus is built from. */
export interface TenantCorpusOptions extends RetrievalEngineOptions {
  /** The tenant whose rows are read and written, and only those. Default `default`. */
  tenantId?: string;
  /** Hybrid search's fusion weights; default `fusionWeightsFor(embedder.id)`. */
  weights?: FusionWeights;
}

/** Columns to select beside a vector candidate's id, by the name they get in its `row`. */
export type Payload = Readonly<Record<string, PgColumn | SQL.Aliased>>;

export interface CorpusSearchOptions {
  mode: SearchMode;
  filter: CorpusFilter;
  /** Units wanted; the vector side widens once when its rows fall in fewer units. */
  topK: number;
  /** Candidates each retriever returns before fusion. */
  candidateK: number;
  weights: FusionWeights;
  /** Cosine similarity below which a row is not a vector candidate. */
  minScore?: number;
  /**
   * Columns the vector query brings along for each row (`row` on its hits), so that a caller
   * whose unit is the row needs no second query for the rows the vector side found.
   */
  payload?: Payload;
  /**
   * The query's vector, or the promise of it, when the caller makes it (nothing is embedded then):
   * the text side runs while it is made.
   */
  vector?: number[] | Promise<number[]>;
  /**
   * Candidates from outside the indexes, per side (an as-of search's changed versions), merged by
   * score into that side's before fusion and cut to candidateK. The vector side's gets the
   * query's vector; `minScore` applies to it too.
   */
  supplement?: {
    vector?: (queryVector: number[]) => Promise<VectorCandidate[]>;
    text?: () => Promise<TextCandidate[]>;
  };
  /** Repair the vector side's order in hybrid mode too (see vectorCandidates' `repairOrder`); default only in vector mode. */
  repairVectorOrder?: boolean;
  /**
   * Where searches of the same query, filter, candidateK and payload that differ in their vector
   * find the text side once: the first to run stores its statement's promise, the others await it.
   */
  sharedText?: { hits?: Promise<TextCandidate[]> };
  signal?: AbortSignal;
}

/**
 * Hybrid search over any corpus: embed the query, rank the nearest rows with the filter inside
 * the scan, rank units by BM25 over the postings, and fuse the two lists. What a hit is, and what
 * it shows, is the corpus owner's: the engine returns ranked unit ids.
 */
export interface RetrievalEngine {
  readonly analyzer: Analyzer;
  search(corpus: Corpus, query: string, options: CorpusSearchOptions): Promise<RankedUnit[]>;
  /**
   * Rows nearest to a vector in the embedder's space, filter applied inside the scan.
   * `repairOrder` false: the iterative scan's relaxed order is left as found (for fusion).
   */
  vectorCandidates(corpus: Corpus, vector: number[], filter: CorpusFilter, limit: number, payload?: Payload, repairOrder?: boolean): Promise<VectorCandidate[]>;
  /**
   * Units by BM25 over the postings, computed in the database; OR over the query's terms. With a
   * payload (for a corpus whose unit is its row), each hit brings those columns as `row`.
   */
  textCandidates(corpus: Corpus, query: string, filter: CorpusFilter, limit: number, payload?: Payload): Promise<TextCandidate[]>;
  embedQuery(query: string, signal?: AbortSignal, urgent?: boolean): Promise<number[]>;
}

const payloadIds = new WeakMap<Payload, number>();
let payloadsSeen = 0;
const payloadId = (payload: Payload | undefined) => {
  if (!payload) return 0;
  let id = payloadIds.get(payload);
  if (id === undefined) payloadIds.set(payload, (id = ++payloadsSeen));
  return id;
};

/** What a side's statements are built from: they are built once per corpus, payload and filter (values included), then reused. */
const statementKey = (corpus: Corpus, filter: CorpusFilter, payload: Payload | undefined) =>
  `${corpus.name}\u0000${payloadId(payload)}\u0000${JSON.stringify(filter)}`;

/** A select list of columns by the names their row fields get. */
const selectList = (fields: Readonly<Record<string, PgColumn | SQL.Aliased>>): SQL =>
  sql.join(
    Object.entries(fields).map(([name, field]) => sql`${is(field, SQL.Aliased) ? field.sql : field} AS ${sql.identifier(name)}`),
    sql`, `,
  );

/** A payload's values as drizzle's select would give them (each column's own mapping). */
function fromDriver(payload: Payload, row: Record<string, unknown>): Record<string, unknown> {
  for (const [name, field] of Object.entries(payload)) {
    const value = row[name];
    if (value !== null && value !== undefined && is(field, Column)) row[name] = field.mapFromDriverValue(value);
  }
  return row;
}

/**
 * An upper bound of the rows a filter matches, from the counts the writers keep by scope and tag:
 * the scope's rows, at most the sum of the counts of its `tagsAny`, at most the count of each of
 * its `tagsAll`. Undefined when the corpus keeps none or the filter goes beyond them (metadata):
 * the search then counts its matches, capped.
 */
function statsEstimate(corpus: Corpus, filter: CorpusFilter): SQL | undefined {
  const stats = corpus.filterStats;
  if (!stats || filter.metadata) return undefined;
  const scopes = stats.scopes(filter);
  if (!scopes) return undefined;
  const { tagsAny, tagsAll } = filter.tags;
  const bounds = [sql`coalesce(sum(rows) FILTER (WHERE tag = ''), 0)`];
  if (tagsAny.length) bounds.push(sql`coalesce(sum(rows) FILTER (WHERE tag = ANY(${textArray(tagsAny)})), 0)`);
  for (const tag of tagsAll) bounds.push(sql`coalesce(sum(rows) FILTER (WHERE tag = ${tag}), 0)`);
  return sql`(SELECT least(${sql.join(bounds, sql`, `)}) FROM vector_filter_stats
    WHERE table_name = ${stats.table} AND tenant_id = ${filter.tenantId} AND scope = ANY(${textArray(scopes)})
      AND tag = ANY(${textArray(['', ...tagsAny, ...tagsAll])}))`;
}

/** Whether statsEstimate, where it gives one, counts the filter's rows rather than bounding them: one tag to have, none to lack, no time. */
const statsCount = (filter: CorpusFilter) => {
  const { tagsAny, tagsAll, tagsNone } = filter.tags;
  return tagsAny.length + tagsAll.length <= 1 && tagsNone.length === 0 && filter.until === undefined;
};

const narrows = (filter: CorpusFilter) => {
  const { tags } = filter;
  return (
    tags.tagsAny.length + tags.tagsAll.length + tags.tagsNone.length > 0 ||
    filter.metadata !== undefined ||
    filter.oneOf !== undefined ||
    filter.until !== undefined
  );
};

/** Whether a filter selects less than its tenant's whole corpus. */
const narrowsScope = (filter: CorpusFilter) => narrows(filter) || Object.keys(filter.equals).length > 0 || filter.notEquals !== undefined;

/** Two lists of one side merged by score (best first, ties by id), cut to `limit`. */
function mergeByScore<T extends { id: string; score: number }>(found: readonly T[], more: readonly T[], limit: number): T[] {
  return [...found, ...more].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, limit);
}

/** See vectorCandidates' `repairOrder`. */
const ORDER_REPAIR = 2;

/** How many more rows the vector side fetches when its first candidateK fall in fewer than topK units. */
const VECTOR_WIDENING = 4;

export function createRetrievalEngine(options: RetrievalEngineOptions): RetrievalEngine {
  const { db, embedder } = options;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const bm25 = options.bm25 ?? DEFAULT_BM25_PARAMS;
  const concurrentReads = readsRunConcurrently(db);

  async function embedQuery(query: string, signal?: AbortSignal, urgent = false): Promise<number[]> {
    const [vector] = await embedder.embed([query], { ...(signal ? { signal } : {}), ...(urgent ? { urgent } : {}) });
    if (!vector) throw new Error(`embedder ${embedder.id} returned no vector`);
    return vector;
  }

  /**
   * `repairOrder` (default true): over a filter beyond the scope, the iterative scan's relaxed
   * order is repaired: where the counts say so, the first candidate list is widened to hold
   * ORDER_REPAIR times the rows; else that many rows are fetched past it and the best kept
   * (filtered-vector-search.ts, `candidateFactor`). At 100k memories and a 10% tag (topK 10,
   * ef_search 80, `npm run bench:peers` data): ×1 recall@10 0.999 in 1.86 ms, ×2 1.000 in 2.40
   * ms, ×4 1.000 in 3.79 ms. A hybrid search's wider candidate list feeds fusion, where a row
   * found a little out of order still counts: it is not repaired.
   */
  async function vectorCandidates(
    corpus: Corpus,
    vector: number[],
    filter: CorpusFilter,
    limit: number,
    payload?: Payload,
    repairOrder = true,
  ): Promise<VectorCandidate[]> {
    if (vector.length !== embedder.dimensions) {
      throw new RangeError(`query vector has ${vector.length} dimensions; the store holds ${embedder.dimensions}`);
    }
    const fields = { ...payload, id: corpus.id, unitId: corpus.unit ?? corpus.id };
    const key = statementKey(corpus, filter, payload);
    const rows = await filteredVectorSearch<{ id: string; unitId: string } & Record<string, unknown>>(
      db,
      {
        key,
        make: () => {
          const estimate = statsEstimate(corpus, filter);
          return {
            table: corpus.table,
            columns: selectList(fields),
            embedding: corpus.embedding,
            where: filterToSql(filter, corpus.filters),
            estimate,
            estimateCounts: estimate !== undefined && statsCount(filter),
          };
        },
      },
      vector,
      limit,
      {
        ...options,
        efSearch: options.efSearch ?? corpus.efSearch,
        candidateFactor: options.candidateFactor ?? (repairOrder && narrows(filter) ? ORDER_REPAIR : 1),
      },
    );
    return rows
      .map(({ id, unitId, distance, ...row }) => ({ id, unitId, score: 1 - Number(distance), ...(payload ? { row: fromDriver(payload, row) } : {}) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, limit);
  }

  async function textCandidates(corpus: Corpus, query: string, filter: CorpusFilter, limit: number, payload?: Payload): Promise<TextCandidate[]> {
    const terms = queryTermCounts(analyzer.analyze(query));
    if (terms.size === 0 || limit <= 0) return [];
    const hits = await bm25Candidates(db, corpus.bm25, filter.tenantId, {
      terms,
      limit,
      params: bm25,
      analyzerId: analyzer.id,
      shape: {
        key: statementKey(corpus, filter, payload),
        make: () => ({
          table: corpus.table,
          idColumn: corpus.id,
          where: filterToSql(filter, corpus.filters),
          estimate: statsEstimate(corpus, filter),
          narrows: narrowsScope(filter),
          ...(payload ? { columns: selectList(payload) } : {}),
        }),
      },
    });
    if (hits.length > 0) return payload ? hits.map((h) => ({ ...h, row: fromDriver(payload, h.row!) })) : hits;
    // Nothing scored: no term matched, or the postings are another analyzer's, which must not pass silently.
    const stats = await readBm25Corpus(db, corpus.bm25, filter.tenantId);
    if (stats && stats.total > 0 && stats.analyzerId !== analyzer.id) throw new AnalyzerMismatchError(stats.analyzerId, analyzer.id, corpus.reindexRemedy);
    return [];
  }

  /**
   * Traced: a `retrieval <corpus>` span with the rows each side found and the units fused, and a
   * child span per side (`retrieval.vector`, `retrieval.text`) that shows whether they overlapped.
   */
  function search(corpus: Corpus, query: string, opts: CorpusSearchOptions): Promise<RankedUnit[]> {
    const attributes = {
      [MEMRAG_RETRIEVAL_CORPUS]: corpus.name,
      [MEMRAG_RETRIEVAL_MODE]: opts.mode,
      [MEMRAG_RETRIEVAL_TOP_K]: opts.topK,
      [MEMRAG_RETRIEVAL_CANDIDATE_K]: opts.candidateK,
    };
    return withSpan(`retrieval ${corpus.name}`, attributes, async (span) => {
      const counted = { vector: 0, text: 0 };
      const units = await searchSides(corpus, query, opts, counted);
      span.setAttributes({
        [MEMRAG_RETRIEVAL_VECTOR_ROWS]: counted.vector,
        [MEMRAG_RETRIEVAL_TEXT_ROWS]: counted.text,
        [MEMRAG_RETRIEVAL_FUSED_ROWS]: units.length,
      });
      return units;
    });
  }

  async function searchSides(corpus: Corpus, query: string, opts: CorpusSearchOptions, counted: { vector: number; text: number }): Promise<RankedUnit[]> {
    const { mode, filter, topK, candidateK, signal, supplement } = opts;
    signal?.throwIfAborted();
    const side = async <T>(name: 'vector' | 'text', find: () => Promise<T[]>): Promise<T[]> =>
      withSpan(`retrieval.${name}`, { [MEMRAG_RETRIEVAL_CORPUS]: corpus.name }, async (span) => {
        const rows = await find();
        counted[name] = rows.length;
        span.setAttribute(name === 'vector' ? MEMRAG_RETRIEVAL_VECTOR_ROWS : MEMRAG_RETRIEVAL_TEXT_ROWS, rows.length);
        return rows;
      });
    const findVector = async (queryVector: Promise<number[]>) => {
      const vector = await queryVector;
      const repairOrder = opts.repairVectorOrder ?? mode === 'vector';
      let hits = await vectorCandidates(corpus, vector, filter, candidateK, opts.payload, repairOrder);
      // candidateK rows may fall in fewer than topK units, and a hit is a unit: widen once, so
      // vector mode still returns topK hits when topK = candidateK. Only then: a wider HNSW
      // search costs several times as much.
      if (corpus.unit && hits.length >= candidateK && unitsIn(hits) < topK) {
        hits = withinUnits(await vectorCandidates(corpus, vector, filter, candidateK * VECTOR_WIDENING, opts.payload, repairOrder), candidateK);
      }
      if (supplement?.vector) hits = mergeByScore(hits, await supplement.vector(vector), candidateK);
      const { minScore } = opts;
      return minScore === undefined ? hits : hits.filter((h) => h.score >= minScore);
    };
    // Urgent: the search waits for it, where a write's vector only delays its own commit.
    const queryVector = () => (opts.vector !== undefined ? Promise.resolve(opts.vector) : embedQuery(query, signal, true));
    // A unit that is its own row brings its payload from either side; a passage's would be its first chunk's, not the one shown.
    const findText = async () => {
      const find = () => textCandidates(corpus, query, filter, candidateK, corpus.unit ? undefined : opts.payload);
      const hits = await (opts.sharedText ? (opts.sharedText.hits ??= find()) : find());
      return supplement?.text ? mergeByScore(hits, await supplement.text(), candidateK) : hits;
    };
    const textSide = () => side('text', findText);
    if (mode === 'text') return rankUnits(mode, [], await textSide(), opts.weights);
    if (mode === 'vector') return rankUnits(mode, await side('vector', () => findVector(queryVector())), [], opts.weights);
    // The text side runs while the query is embedded (in the model's worker threads or a remote
    // service). On a server pool the vector statement may run beside it on a second connection:
    // a hybrid search then takes about as long as its slower side, not their sum.
    const vector = queryVector();
    if (concurrentReads) {
      const [vectorHits, textHits, signals] = await Promise.all([side('vector', () => findVector(vector)), textSide(), corpusSignals(corpus, query, opts)]);
      return rankUnits(mode, vectorHits, textHits, opts.weights, signals);
    }
    // On PGlite one connection runs one statement at a time: the text statement first, during
    // the embedding, then the vector statement. A failed text side leaves the embedding to finish
    // unobserved, so its own failure is not reported twice.
    vector.catch(() => undefined);
    const textHits = await textSide();
    const vectorHits = await side('vector', () => findVector(vector));
    return rankUnits(mode, vectorHits, textHits, opts.weights, await corpusSignals(corpus, query, opts));
  }

  /** The corpus's own signals of weight above 0, each in a `retrieval.<name>` span, one after the other. */
  async function corpusSignals(corpus: Corpus, query: string, opts: CorpusSearchOptions): Promise<Record<string, readonly string[]>> {
    const lists: Record<string, readonly string[]> = {};
    for (const [name, rank] of Object.entries(corpus.signals ?? {})) {
      if (!((opts.weights.signals[name] ?? 0) > 0)) continue;
      lists[name] = await withSpan(`retrieval.${name}`, { [MEMRAG_RETRIEVAL_CORPUS]: corpus.name }, () =>
        rank({ db, query, filter: opts.filter, limit: opts.candidateK, ...(opts.signal ? { abortSignal: opts.signal } : {}) }),
      );
    }
    return lists;
  }

  return { analyzer, search, vectorCandidates, textCandidates, embedQuery };
}
