/**
 * A BEIR corpus ingested through the document store (PGlite in memory, the configured embedder
 * behind a vector cache), and per-query candidate lists from the knowledge search's own vector
 * and BM25 queries, so that benchmark and calibration measure exactly what `/v1/search` runs.
 * Chunk rankings become document rankings by each document's best chunk.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../../../src/config/config.js';
import { type Database, openDatabase } from '../../../src/db/database.js';
import { queryRows } from '../../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../../src/db/vector-space.js';
import { createEmbedder } from '../../../src/embeddings/create-embedder.js';
import type { Embedder } from '../../../src/embeddings/embedder.js';
import { createDocumentStore } from '../../../src/knowledge/document-store.js';
import { type FusionWeights, type KnowledgeSearch, createKnowledgeSearch } from '../../../src/knowledge/knowledge-search.js';
import { fuse } from '../../../src/knowledge/fusion.js';
import { DocumentParseError } from '../../../src/knowledge/parsers/document-parse-error.js';
import { LexicalReranker } from '../../../src/knowledge/rerank/lexical-reranker.js';
import { type BeirQuery, type Qrels, loadCorpus, loadQrels, loadQueries } from './beir.js';
import { cachingEmbedder } from './vector-cache.js';

export interface QueryCandidates {
  query: BeirQuery;
  /** Chunk ids, best first. */
  vector: string[];
  text: string[];
}

export interface KnowledgeBench {
  database: Database;
  embedder: Embedder;
  search: KnowledgeSearch;
  qrels: Qrels;
  candidates: QueryCandidates[];
  /** Chunk id → the BEIR ids of its document (identical abstracts are stored once). */
  docsOfChunk: Map<string, string[]>;
  chunkText: Map<string, string>;
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
  const store = createDocumentStore({ db: database.db, embedder, embedBatchSize: 256 });

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
  const chunkRows = await queryRows<{ id: string; document_id: string; text: string }>(
    database.db,
    sql`SELECT id::text AS id, document_id::text AS document_id, text FROM chunks`,
  );
  log(`  ${chunkRows.length} chunks in ${((performance.now() - started) / 1000).toFixed(0)} s; ${skipped} empty documents skipped`);
  const docsOfChunk = new Map(chunkRows.map((r) => [r.id, beirIdsOf.get(r.document_id) ?? []]));
  const chunkText = new Map(chunkRows.map((r) => [r.id, r.text]));

  const search = createKnowledgeSearch({ db: database.db, embedder });
  started = performance.now();
  const candidates: QueryCandidates[] = [];
  const queryVectors = await embedder.embed(judged.map((q) => q.text));
  let vectorMs = 0;
  let textMs = 0;
  for (const [i, query] of judged.entries()) {
    let t = performance.now();
    const vector = (await search.vectorCandidates(queryVectors[i]!, NO_TAGS, BENCH_CANDIDATE_CHUNKS)).map((h) => h.id);
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
    chunkText,
    async close() {
      await database.close();
      await embedder.close();
    },
  };
}

/** Documents in the order of their best chunk. */
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

export function fusedChunks(c: QueryCandidates, weights: FusionWeights): string[] {
  return fuse(
    [
      { ids: c.vector, weight: weights.vector },
      { ids: c.text, weight: weights.text },
    ],
    weights.k ?? 60,
  ).map((h) => h.id);
}

/** The lexical reranker over the first `depth` chunks, the rest kept in order behind them (for recall). */
export function lexicallyReranked(query: string, chunkIds: readonly string[], chunkText: ReadonlyMap<string, string>, depth: number, reranker = new LexicalReranker()): string[] {
  const head = chunkIds.slice(0, depth).map((id) => ({ id, text: chunkText.get(id) ?? '' }));
  return [...reranker.rerankSync(query, head, head.length).map((h) => h.id), ...chunkIds.slice(depth)];
}
