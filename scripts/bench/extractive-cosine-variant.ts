/**
 * Tuning experiment: the extractive tuning's cached cosines recomputed against another form of the
 * question (its wh-words and auxiliaries removed: "In what year did Tesla move to Paris?" →
 * "In Tesla move to Paris"), so `extractive-tuning.ts` can measure that cosine with TUNING_RAW
 * pointing at the file written here. Sentence vectors come from the vector cache the raw file's
 * run filled; only the new question forms meet the model.
 *
 *   npx tsx scripts/bench/extractive-cosine-variant.ts /tmp/memrag-extractive-raw-1500-7.json /tmp/raw-variant.json
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadConfig } from '../../src/config/config.js';
import { cosine } from '../../src/util/cosine.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import type { RawSet } from './lib/extractive-raw.js';
import { cachingEmbedder } from './lib/vector-cache.js';

const [input, output] = process.argv.slice(2);
if (!input || !output) throw new Error('usage: extractive-cosine-variant.ts <raw.json> <out.json>');
const WH = /\b(?:what|which|who|whom|whose|when|where|why|how|many|much|did|does|do|is|was|were|are)\b/gi;
const withoutWhWords = (q: string) => q.replace(WH, ' ').replace(/[?]/g, ' ').replace(/\s+/g, ' ').trim();

const raw = JSON.parse(readFileSync(input, 'utf8')) as RawSet;
const embedder = cachingEmbedder(await createEmbedder(loadConfig({ ...process.env, LOG_LEVEL: 'silent' })));
let done = 0;
for (const row of [...raw.own, ...raw.other]) {
  const texts = Object.keys(row.cosines);
  const [q, ...vectors] = await embedder.embed([withoutWhWords(row.question) || row.question, ...texts]);
  row.cosines = Object.fromEntries(texts.map((t, i) => [t, Math.max(0, cosine(q!, vectors[i]!))]));
  if (++done % 500 === 0) console.error(`${done} rows, ${embedder.misses} embedded`);
}
writeFileSync(output, JSON.stringify(raw));
console.log(`wrote ${output}: ${embedder.misses} texts embedded, ${embedder.hits} from the cache`);
await embedder.close();
