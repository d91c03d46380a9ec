/**
 * What BM25 should score on a BEIR dataset (default SciFact, training split): whole documents,
 * the embedder's chunks, or passages of consecutive chunks at several sizes. In memory, with the
 * bundled model's tokenizer and window (128 tokens), chunked as the document store chunks; a
 * document ranks at its best unit. Prints nDCG@10 and Recall@100 per unit.
 *
 *   npx tsx scripts/bench/bm25-passages.ts
 *   BEIR_DIR=../shared/datasets/scifact BEIR_SPLIT=train PASSAGE_TOKENS=256,512 npx tsx scripts/bench/bm25-passages.ts
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_USE_MAX_INPUT_TOKENS } from '../../src/embeddings/bundled-use-embedder.js';
import { loadUseLiteTokenizer } from '../../src/embeddings/use-lite-tokenizer.js';
import { defaultAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { InMemoryBm25Index } from '../../src/retrieval/bm25/bm25.js';
import { prepareChunks } from '../../src/documents/prepare-chunks.js';
import { evaluate, loadCorpus, loadQrels, loadQueries } from './lib/beir.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');
const dir = resolve(repoRoot, process.env.BEIR_DIR ?? '../shared/datasets/scifact');
const split = process.env.BEIR_SPLIT ?? 'train';
const passageSizes = (process.env.PASSAGE_TOKENS ?? '256,384,512,1024').split(',').map(Number);

const [corpus, queries, qrels] = await Promise.all([loadCorpus(dir), loadQueries(dir, split), loadQrels(dir, split)]);
const judged = queries.filter((q) => qrels.has(q.id));
const tokenizer = await loadUseLiteTokenizer();
const countTokens = (text: string) => tokenizer.countTokens(text);
const documents = corpus.filter((d) => d.text.trim() !== '');

interface Unit {
  id: string;
  doc: string;
  text: string;
}

/** Each document's units as the document store indexes them, at this passage size (1: every chunk alone). */
function units(passageTokens: number): Unit[] {
  return documents.flatMap((d) =>
    prepareChunks({
      title: d.title,
      text: d.text,
      markup: 'plain',
      maxInputTokens: BUNDLED_USE_MAX_INPUT_TOKENS,
      analyzer: defaultAnalyzer,
      countTokens,
      options: { passageTokens },
    }).flatMap((c) => (c.passageTerms ? [{ id: `${d.id}#${c.index}`, doc: d.id, text: c.passageTerms.text }] : [])),
  );
}

function measure(list: readonly Unit[]) {
  const index = new InMemoryBm25Index(defaultAnalyzer);
  const docOf = new Map<string, string>();
  for (const u of list) {
    index.add(u.id, u.text);
    docOf.set(u.id, u.doc);
  }
  const runs = new Map(
    judged.map((q) => {
      const seen = new Set<string>();
      for (const hit of index.search(q.text, { topK: 2000 })) {
        seen.add(docOf.get(hit.id)!);
        if (seen.size >= 100) break;
      }
      return [q.id, [...seen]];
    }),
  );
  return evaluate(runs, qrels);
}

console.log(`${documents.length} documents, ${judged.length} judged ${split} queries from ${dir}\n`);
console.log('| BM25 unit | units | nDCG@10 | Recall@100 |');
console.log('| --- | --- | --- | --- |');
const rows: [string, Unit[]][] = [
  ['whole document (title + text)', documents.map((d) => ({ id: d.id, doc: d.id, text: `${d.title}\n\n${d.text}` }))],
  ['chunk (128 tokens, title in front)', units(1)],
  ...passageSizes.map((n): [string, Unit[]] => [`passage of chunks, up to ${n} tokens`, units(n)]),
];
for (const [name, list] of rows) {
  const m = measure(list);
  console.log(`| ${name} | ${list.length} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} |`);
}
