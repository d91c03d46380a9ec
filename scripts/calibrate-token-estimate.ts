/**
 * How the compactor's token estimate (`src/compaction/token-estimate.ts`) compares with real BPE
 * tokenizers: the ratio real / estimate on SciFact abstracts (prose), JSON tool results, source
 * blocks as the chat sends them, and UUID-heavy JSON. Below 1 the estimate errs high, which is the
 * safe side for a context budget. gpt-tokenizer is not a dependency; install it for the run:
 *
 *   npm install --no-save gpt-tokenizer && npx tsx scripts/calibrate-token-estimate.ts [corpus.jsonl]
 *
 * The corpus defaults to ../shared/datasets/scifact/corpus.jsonl (BEIR format: title, text).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { estimateTextTokens } from '../src/compaction/token-estimate.js';
import { seededRandom } from '../testkit/vector-fixtures.js';

type Encode = (text: string) => number[];

async function encoder(name: string): Promise<Encode> {
  // A variable specifier: the package is optional, and the typecheck must not require it.
  const specifier = `gpt-tokenizer/encoding/${name}`;
  try {
    const module = (await import(specifier)) as { encode: Encode };
    return module.encode;
  } catch {
    console.error('gpt-tokenizer is not installed: npm install --no-save gpt-tokenizer');
    process.exit(1);
  }
}

const corpusPath = process.argv[2] ?? '../shared/datasets/scifact/corpus.jsonl';
const docs = readFileSync(corpusPath, 'utf8')
  .split('\n')
  .filter(Boolean)
  .slice(0, 2_000)
  .map((line) => JSON.parse(line) as { _id: string; title: string; text: string });
const random = seededRandom(7);

const samples: Record<string, string[]> = {
  prose: docs.map((d) => d.text),
  'JSON tool results': docs
    .slice(0, 500)
    .map((d) => JSON.stringify({ results: [{ id: d._id, title: d.title, snippet: d.text.slice(0, 300), score: random() }] })),
  'source blocks': docs
    .slice(0, 500)
    .map((d) => `<sources>\n<source id="1" kind="document" title="${d.title}">\n${d.text.slice(0, 600)}\n</source>\n</sources>`),
  'UUID-heavy JSON': Array.from({ length: 300 }, () => JSON.stringify({ id: randomUUID(), key: `chat-${randomUUID()}`, n: Math.floor(random() * 1e9) })),
};

const summary = (ratios: number[]) => {
  const sorted = [...ratios].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return {
    mean: (ratios.reduce((a, b) => a + b, 0) / ratios.length).toFixed(3),
    p50: at(0.5).toFixed(3),
    p99: at(0.99).toFixed(3),
    max: sorted.at(-1)!.toFixed(3),
  };
};

const rows = [];
for (const name of ['o200k_base', 'cl100k_base']) {
  const encode = await encoder(name);
  for (const [kind, texts] of Object.entries(samples)) {
    rows.push({ tokenizer: name, kind, n: texts.length, ...summary(texts.map((t) => encode(t).length / estimateTextTokens(t))) });
  }
}
console.log('real tokens / estimated tokens (below 1: the estimate errs high)');
console.table(rows);
