/**
 * A BEIR corpus ingested through the document store (PGlite in memory, the configured embedder
 * behind a vector cache), and per-query candidate lists from the knowledge search's own vector
 * and BM25 queries, ranked into passages as `/v1/search` ranks them, so that benchmark and
 * calibration measure exactly what it runs. Passage rankings become document rankings by each
 * document's best passage.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../../../src/config/config.js';
import { type Database, openDatabase } from '../../../src/db/database.js';
import { queryRows } from '../../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../../src/db/vector-space.js';
import { createEmbedder } from '../../../src/embeddings/create-embedder.js';
import type { Embedder } from '../../../src/embeddings/embedder.js';
import { createDocumentStore } from '../../../src/documents/document-store.js';
import { type DocumentSearch, createDocumentSearch } from '../../../src/documents/document-search.js';
import { type PassageChunk, citedChunk } from '../../../src/documents/cited-chunk.js';
import type { FusionWeights } from '../../../src/retrieval/fusion-weights.js';
import { type VectorCandidate, rankUnits } from '../../../src/retrieval/rank-units.js';
import type { SearchMode } from '../../../src/retrieval/search-mode.js';
import { DocumentParseError } from '../../../src/documents/parsers/document-parse-error.js';
import { LexicalReranker } from '../../../src/retrieval/rerank/lexical-reranker.js';
import { asWorkerWould } from './as-worker-would.js';
import { type BeirQuery, type Qrels, loadCorpus, loadQrels, loadQueries } from './beir.js';
import { cachingEmbedder } from './vector-cache.js';

export interface QueryCandidates {
  query: BeirQuery;
  /** Chunks, nearest first. */
  vector: VectorCandidate[];
  /** Passage ids (their first chunk's), best first. */
  text: string[];
}

export interface KnowledgeBench {
  database: Database;
  embedder: Embedder;
  search: DocumentSearch;
  qrels: Qrels;
  candidates: QueryCandidates[];
  /** Chunk id → the BEIR ids of its document (identical abstracts are stored once). */
  docsOfChunk: Map<string, string[]>;
  /** Passage id → its chunks, in document order. */
  passageChunks: Map<string, PassageChunk[]>;
  close(): Promise<void>;
}

const NO_TAGS = { tagsAny: [], tagsAll: [], tagsNone: [] };
const log = (message: string) => console.error(message);

/** Candidates per retriever, in chunks: enough for Recall@100 over documents of several chunks. */
export const BENCH_CANDIDATE_CHUNKS = 1000;
const INGEST_CONCURRENCY = 4;

export async function openKnowledgeBench(dir: string, split: string): Promise<KnowledgeBench> {
  const [corpus, queries, qrels] = await Promise.all([loadCorpus(dir), loadQueries(dir, split), loadQrels(dir, split)]);
  const judged = queries.filter((q) => qrels.has(q.id));
  const embedder = cachingEmbedder(await createEmbedder(loadConfig({ ...process.env, DATA_DIR: 'memory://' })));
  const database = await openDatabase({});
  await ensureVectorSpace(database.db, embedder);
  // Cached vectors arrive a turn later, as a worker's would: at once, the ingests would starve PGlite's statistics upkeep.
  const store = createDocumentStore({ db: database.db, embedder: asWorkerWould(embedder), embedBatchSize: 256 });

  log(`ingesting ${corpus.length} documents from ${dir} with ${embedder.id} (vector cache: later runs skip the model)`);
  let started = performance.now();
  const beirIdsOf = new Map<string, string[]>();
  let skipped = 0;
  // Several documents at a time, so every embedding worker has work (one abstract is a few chunks).
  let next = 0;
  let done = 0;
  const ingestNext = async () => {
    while (next < corpus.length) {
      const doc = corpus[next++]!;
      try {
        const { document } = await store.ingest({ title: doc.title, content: doc.text, format: 'text', source: `beir:${doc.id}` });
        beirIdsOf.set(document.id, [...(beirIdsOf.get(document.id) ?? []), doc.id]);
      } catch (err) {
        if (!(err instanceof DocumentParseError)) throw err;
        skipped++;
      }
      if (++done % 500 === 0) log(`  ${done} documents, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
  };
  await Promise.all(Array.from({ length: INGEST_CONCURRENCY }, ingestNext));
  const chunkRows = await queryRows<{ id: string; passage_id: string; document_id: string; index: number; text: string }>(
    database.db,
    sql`SELECT id::text AS id, passage_id::text AS passage_id, document_id::text AS document_id, index, text FROM chunks ORDER BY passage_id, index`,
  );
  const docsOfChunk = new Map(chunkRows.map((r) => [r.id, beirIdsOf.get(r.document_id) ?? []]));
  const passageChunks = new Map<string, PassageChunk[]>();
  for (const r of chunkRows) {
    const chunk = { chunkId: r.id, chunkIndex: r.index, text: r.text };
    const list = passageChunks.get(r.passage_id);
    if (list) list.push(chunk);
    else passageChunks.set(r.passage_id, [chunk]);
  }
  log(
    `  ${chunkRows.length} chunks in ${passageChunks.size} passages in ${((performance.now() - started) / 1000).toFixed(0)} s; ` +
      `${skipped} empty documents skipped`,
  );

  const search = createDocumentSearch({ db: database.db, embedder });
  started = performance.now();
  const candidates: QueryCandidates[] = [];
  const queryVectors = await embedder.embed(judged.map((q) => q.text));
  let vectorMs = 0;
  let textMs = 0;
  for (const [i, query] of judged.entries()) {
    let t = performance.now();
    const vector = await search.vectorCandidates(queryVectors[i]!, NO_TAGS, BENCH_CANDIDATE_CHUNKS);
    vectorMs += performance.now() - t;
    t = performance.now();
    const text = (await search.textCandidates(query.text, NO_TAGS, BENCH_CANDIDATE_CHUNKS)).map((h) => h.id);
    textMs += performance.now() - t;
    candidates.push({ query, vector, text });
  }
  log(
    `  ${judged.length} ${split} queries: vector ${(vectorMs / judged.length).toFixed(1)} ms, BM25 ${(textMs / judged.length).toFixed(1)} ms ` +
      `per query (${BENCH_CANDIDATE_CHUNKS} candidates each)`,
  );
  return {
    database,
    embedder,
    search,
    qrels,
    candidates,
    docsOfChunk,
    passageChunks,
    async close() {
      await database.close();
      await embedder.close();
    },
  };
}

/** Documents in the order of their best chunk or passage (a passage is named by its first chunk). */
export function documentRanking(chunkIds: readonly string[], docsOfChunk: ReadonlyMap<string, string[]>, limit = 100): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const id of chunkIds) {
    for (const doc of docsOfChunk.get(id) ?? []) {
      if (seen.has(doc)) continue;
      seen.add(doc);
      out.push(doc);
    }
    if (out.length >= limit) break;
  }
  return out;
}

/** Passage ids as `/v1/search` ranks them in this mode. */
export function rankedPassages(c: QueryCandidates, mode: SearchMode, weights: FusionWeights): string[] {
  return passagesOf(c, mode, weights).map((p) => p.id);
}

// Only the text side's order is kept, and fusion needs no more.
const passagesOf = (c: QueryCandidates, mode: SearchMode, weights: FusionWeights) =>
  rankUnits(
    mode,
    c.vector,
    c.text.map((id, i) => ({ id, score: -i })),
    weights,
  );

/**
 * As `/v1/search` with the lexical reranker: each of the first `depth` hybrid passages cites its
 * chunk, the reranker orders those chunks, and the rest follow in order behind them (for recall).
 * Returns chunk ids.
 */
export function lexicallyReranked(
  bench: KnowledgeBench,
  c: QueryCandidates,
  weights: FusionWeights,
  depth: number,
  reranker = new LexicalReranker(),
): string[] {
  const passages = passagesOf(c, 'hybrid', weights);
  const citing = new LexicalReranker();
  const head = passages.slice(0, depth).flatMap((p) => {
    const cited = citedChunk(c.query.text, 'hybrid', p, bench.passageChunks.get(p.id) ?? [], citing);
    return cited ? [{ id: cited.chunkId, text: cited.text }] : [];
  });
  return [...reranker.rerankSync(c.query.text, head, head.length).map((h) => h.id), ...passages.slice(depth).map((p) => p.id)];
}
