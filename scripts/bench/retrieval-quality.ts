/**
 * Retrieval quality of `/v1/search` on a BEIR dataset (default SciFact, training split): nDCG@10
 * and Recall@100 for vector, BM25 (text), hybrid (weighted RRF with the configured embedder's
 * calibrated weights) and hybrid + lexical rerank. Documents are ingested through the document
 * store into an in-memory PGlite; rankings count each document at its best passage (or chunk).
 *
 *   npm run bench:retrieval
 *   BEIR_DIR=../shared/datasets/scifact BEIR_SPLIT=train npx tsx scripts/bench/retrieval-quality.ts
 *
 * The first run embeds every chunk (about 33k SciFact chunks: ~20 min with the bundled model on
 * two cores); vectors are cached under /tmp/memrag-vector-cache (VECTOR_CACHE_DIR) for later runs.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fusionWeightsFor } from '../../src/retrieval/fusion-weights.js';
import { evaluate } from './lib/beir.js';
import { documentRanking, lexicallyReranked, openKnowledgeBench, rankedPassages } from './lib/knowledge-bench.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');
const dir = resolve(repoRoot, process.env.BEIR_DIR ?? '../shared/datasets/scifact');
const split = process.env.BEIR_SPLIT ?? 'train';
// As /v1/search reranks: the first 50 fused passages (its default candidateK).
const RERANK_DEPTH = Number(process.env.RERANK_DEPTH ?? 50);

const bench = await openKnowledgeBench(dir, split);
try {
  const weights = fusionWeightsFor(bench.embedder.id);
  const variants: [string, (c: (typeof bench.candidates)[number]) => string[]][] = [
    ['vector', (c) => rankedPassages(c, 'vector', weights)],
    ['text (BM25)', (c) => rankedPassages(c, 'text', weights)],
    [`hybrid (vector ${weights.signals.vector} : text ${weights.signals.text}, k ${weights.k ?? 60})`, (c) => rankedPassages(c, 'hybrid', weights)],
    ['hybrid + lexical rerank', (c) => lexicallyReranked(bench, c, weights, RERANK_DEPTH)],
  ];
  console.log(`\n${bench.embedder.id}, ${bench.candidates.length} judged ${split} queries of ${dir}\n`);
  console.log('| mode | nDCG@10 | Recall@100 |');
  console.log('| --- | --- | --- |');
  for (const [name, rank] of variants) {
    const runs = new Map(bench.candidates.map((c) => [c.query.id, documentRanking(rank(c), bench.docsOfChunk)]));
    const m = evaluate(runs, bench.qrels);
    console.log(`| ${name} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} |`);
  }
} finally {
  await bench.close();
}
