/**
 * SQuAD's tuning articles (13–48 of its dev set) as a BEIR retrieval set, so `bench:retrieval`
 * (and `npm run calibrate`) measure passage retrieval on it as they do on SciFact: every paragraph a
 * document (its article's title as the title), every question a query whose one relevant document
 * is its paragraph. Questions are asked over all 36 articles at once, without a tag filter.
 *
 *   npx tsx scripts/bench/squad-as-beir.ts                    # writes /tmp/memrag-squad-beir
 *   BEIR_DIR=/tmp/memrag-squad-beir BEIR_SPLIT=tuning npm run bench:retrieval
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSquad } from './lib/squad.js';

const out = process.env.BEIR_OUT ?? '/tmp/memrag-squad-beir';
const squad = loadSquad();
const paragraphId = (article: number, index: number) => `a${article}p${index}`;
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'corpus.jsonl'),
  `${squad.paragraphs.map((p) => JSON.stringify({ _id: paragraphId(p.article, p.index), title: p.title, text: p.context })).join('\n')}\n`,
);
writeFileSync(join(out, 'queries-tuning.jsonl'), `${squad.questions.map((q) => JSON.stringify({ _id: q.id, text: q.question })).join('\n')}\n`);
writeFileSync(
  join(out, 'qrels-tuning.tsv'),
  `query-id\tcorpus-id\tscore\n${squad.questions.map((q) => `${q.id}\t${paragraphId(q.article, q.paragraph)}\t1`).join('\n')}\n`,
);
console.log(`${out}: ${squad.paragraphs.length} paragraphs, ${squad.questions.length} questions`);
