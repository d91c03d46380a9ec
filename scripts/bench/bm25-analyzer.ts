/**
 * BM25 analyzer and parameter sweep on SciFact (BEIR format, training split): prints nDCG@10 and
 * Recall@100 per variant, best first. Title and abstract form one document; a document matches if
 * it holds any query term. Last, the lexical reranker over the default BM25's top 100, as a check
 * of what it does to a purely lexical first stage.
 *
 *   npx tsx scripts/bench/bm25-analyzer.ts
 *   BEIR_DIR=../shared/datasets/scifact BEIR_SPLIT=train npx tsx scripts/bench/bm25-analyzer.ts
 */
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createAnalyzer, type AnalyzerOptions } from '../../src/retrieval/bm25/analyzer.js';
import { InMemoryBm25Index } from '../../src/retrieval/bm25/bm25.js';
import { LexicalReranker } from '../../src/retrieval/rerank/lexical-reranker.js';
import { evaluate, loadCorpus, loadQrels, loadQueries, type RetrievalMetrics } from './lib/beir.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');
const dir = resolve(repoRoot, process.env.BEIR_DIR ?? '../shared/datasets/scifact');
const split = process.env.BEIR_SPLIT ?? 'train';

interface Variant {
  analyzer: AnalyzerOptions;
  k1: number;
  b: number;
}

const label = (o: AnalyzerOptions) => `stem=${o.stem === false ? 'off' : 'on'} stop=${String(o.stopwords ?? 'lucene')} compounds=${o.compounds ?? 'split'}`;

const grid: Variant[] = [];
for (const stem of [true, false]) {
  for (const stopwords of ['lucene', 'none'] as const) {
    for (const k1 of [0.9, 1.2, 1.5]) for (const b of [0.4, 0.75]) grid.push({ analyzer: { stem, stopwords }, k1, b });
  }
}
// Beyond the grid: a longer stopword list and glued compounds, at each of the grid's (k1, b).
for (const extra of [{ stopwords: 'extended' as const }, { compounds: 'split-and-join' as const }]) {
  for (const k1 of [0.9, 1.2, 1.5]) for (const b of [0.4, 0.75]) grid.push({ analyzer: { stem: true, ...extra }, k1, b });
}

const [corpus, queries, qrels] = await Promise.all([loadCorpus(dir), loadQueries(dir, split), loadQrels(dir, split)]);
const judgedQueries = queries.filter((q) => qrels.has(q.id));
console.log(`${corpus.length} documents, ${judgedQueries.length} judged ${split} queries from ${dir}\n`);

const indexes = new Map<string, InMemoryBm25Index>();
const results: { variant: Variant; metrics: RetrievalMetrics; ms: number }[] = [];
for (const variant of grid) {
  const key = label(variant.analyzer);
  let index = indexes.get(key);
  if (!index) {
    index = new InMemoryBm25Index(createAnalyzer(variant.analyzer));
    for (const doc of corpus) index.add(doc.id, `${doc.title} ${doc.text}`);
    indexes.set(key, index);
  }
  const started = performance.now();
  const runs = new Map(judgedQueries.map((q) => [q.id, index.search(q.text, { topK: 100, k1: variant.k1, b: variant.b }).map((h) => h.id)]));
  results.push({ variant, metrics: evaluate(runs, qrels), ms: (performance.now() - started) / judgedQueries.length });
}

results.sort((x, y) => y.metrics.ndcgAt10 - x.metrics.ndcgAt10);
console.log('| analyzer | k1 | b | nDCG@10 | Recall@100 |');
console.log('| --- | --- | --- | --- | --- |');
for (const { variant, metrics } of results) {
  console.log(`| ${label(variant.analyzer)} | ${variant.k1} | ${variant.b} | ${metrics.ndcgAt10.toFixed(4)} | ${metrics.recallAt100.toFixed(4)} |`);
}
const meanMs = results.reduce((s, r) => s + r.ms, 0) / results.length;
console.log(`\n${results[0]!.metrics.queries} queries per variant; ${meanMs.toFixed(2)} ms per query on average (in memory)`);

// The reranker only sees what BM25 already saw, so on BM25 alone it is expected to cost quality:
// this keeps that number visible next to the sweep.
const defaultIndex = indexes.get(label({ stem: true, stopwords: 'lucene' }))!;
const texts = new Map(corpus.map((doc) => [doc.id, `${doc.title} ${doc.text}`]));
for (const lengthPenalty of [0, 0.25]) {
  const reranker = new LexicalReranker({ lengthPenalty });
  const runs = new Map(
    judgedQueries.map((q) => {
      const hits = defaultIndex.search(q.text, { topK: 100 }).map((h) => ({ ...h, text: texts.get(h.id)! }));
      return [q.id, reranker.rerankSync(q.text, hits, 100).map((h) => h.id)];
    }),
  );
  const m = evaluate(runs, qrels);
  console.log(`lexical rerank (lengthPenalty ${lengthPenalty}) of BM25 top 100: nDCG@10 ${m.ndcgAt10.toFixed(4)}, Recall@100 ${m.recallAt100.toFixed(4)}`);
}
