/**
 * Sweeps hybrid search's fusion weights on a BEIR dataset and prints the best, to set the
 * configured embedder's entry in FUSION_WEIGHTS_BY_EMBEDDER (src/retrieval/fusion-weights.ts)
 * or FUSION_VECTOR_WEIGHT / FUSION_TEXT_WEIGHT. Tune on a training split only.
 *
 *   npm run calibrate -- ../shared/datasets/scifact [split, default train]
 *
 * The embedder is the configured one (EMBEDDING_* variables, default bundled); vectors are cached
 * under /tmp/memrag-vector-cache, shared with scripts/bench/retrieval-quality.ts.
 */
import { resolve } from 'node:path';
import { evaluate, type RetrievalMetrics } from './bench/lib/beir.js';
import { documentRanking, openKnowledgeBench, rankedPassages } from './bench/lib/knowledge-bench.js';

const [folder, split = 'train'] = process.argv.slice(2).filter((a) => a !== '--');
if (!folder) {
  console.error('usage: npm run calibrate -- <BEIR folder> [split]');
  process.exit(2);
}

const bench = await openKnowledgeBench(resolve(folder), split);
try {
  const measure = (rank: (c: (typeof bench.candidates)[number]) => string[]): RetrievalMetrics =>
    evaluate(new Map(bench.candidates.map((c) => [c.query.id, documentRanking(rank(c), bench.docsOfChunk)])), bench.qrels);
  const text = measure((c) => rankedPassages(c, 'text', { signals: { vector: 0, text: 1 } }));
  const vector = measure((c) => rankedPassages(c, 'vector', { signals: { vector: 1, text: 0 } }));
  console.log(`\n${bench.embedder.id}: BM25 alone nDCG@10 ${text.ndcgAt10.toFixed(4)}, vector alone ${vector.ndcgAt10.toFixed(4)}\n`);

  const results: { vector: number; k: number; m: RetrievalMetrics }[] = [];
  for (const k of [20, 60]) {
    for (const w of [0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1, 1.5, 2]) {
      results.push({ vector: w, k, m: measure((c) => rankedPassages(c, 'hybrid', { signals: { vector: w, text: 1 }, k })) });
    }
  }
  console.log('| vector weight (text 1) | k | nDCG@10 | Recall@100 | vs BM25 |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const r of results) {
    const delta = r.m.ndcgAt10 - text.ndcgAt10;
    console.log(`| ${r.vector} | ${r.k} | ${r.m.ndcgAt10.toFixed(4)} | ${r.m.recallAt100.toFixed(4)} | ${delta >= 0 ? '+' : ''}${delta.toFixed(4)} |`);
  }
  // Best nDCG@10; the smaller vector weight among near-ties, as the safer side for unseen data.
  const best = results.reduce((a, b) => (b.m.ndcgAt10 > a.m.ndcgAt10 + 1e-9 ? b : a));
  console.log(
    `\nbest: { vector: ${best.vector}, text: 1, k: ${best.k} } nDCG@10 ${best.m.ndcgAt10.toFixed(4)} Recall@100 ${best.m.recallAt100.toFixed(4)} ` +
      `(BM25 alone ${text.ndcgAt10.toFixed(4)})`,
  );
  console.log(`FUSION_VECTOR_WEIGHT=${best.vector} FUSION_TEXT_WEIGHT=1  # for ${bench.embedder.id}`);
} finally {
  await bench.close();
}
