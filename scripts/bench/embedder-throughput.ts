/**
 * Throughput of the bundled USE lite embedder, in this thread and in the worker pool, at several
 * batch sizes, on short texts and on paragraphs: `npm run bench:embed`. Then, when the distilled
 * static model is built, the static model against the bundled one in the same run (texts/s and one
 * short query's time).
 *
 * Each case is one embed() call over a fixed set of texts (bulk ingestion / re-embedding), so the
 * run is bounded: about two minutes on two cores. "batch" is texts per model call; in the pool it
 * is the largest unit of work handed to a worker (a call is split so that every worker gets some).
 *
 * To compare the pool with another implementation of it (say, the previous commit's), set
 * BENCH_BASELINE_POOL to a module that exports an `EmbeddingPool` class with the same `start`
 * (e.g. `git archive <commit> src package.json | tar -x -C /tmp/base`, symlink node_modules there,
 * and point at /tmp/base/src/embeddings/embedding-pool.ts). The baseline's workers load the
 * embedder beside it (its `embedder-module-spec.ts`), so the model code is compared as well. Both
 * pools then run side by side at BENCH_WORKERS workers (default 1,2), alternating baseline and
 * current BENCH_ROUNDS times (default 4) per case, so that load from other processes hits both alike.
 * BENCH_BATCH_SIZES (default 1,8,32,64) narrows either run to some batch sizes.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BundledUseEmbedder } from '../../src/embeddings/bundled-use-embedder.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { bundledUseSpec } from '../../src/embeddings/embedder-module-spec.js';
import { EmbeddingPool } from '../../src/embeddings/embedding-pool.js';
import { embedRates, loadStaticIfBuilt, printStaticAgainstBundled } from './lib/static-embed-rates.js';

const BATCH_SIZES = (process.env.BENCH_BATCH_SIZES ?? '1,8,32,64').split(',').map(Number);
const TEXTS_PER_CASE = { short: 256, paragraph: 128 } as const;
const SHORT_WORDS = 10;
const PARAGRAPH_WORDS = 120;

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const corpusPath = fileURLToPath(new URL('../shared/datasets/scifact/corpus.jsonl', new URL(`file://${repoRoot}`)));

function firstWords(text: string, count: number): string {
  return text.split(/\s+/).filter(Boolean).slice(0, count).join(' ');
}

function loadTexts(): { short: string[]; paragraph: string[]; source: string } {
  if (existsSync(corpusPath)) {
    const docs = readFileSync(corpusPath, 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(0, 600)
      .map((line) => JSON.parse(line) as { title: string; text: string });
    const paragraphs = docs.map((d) => firstWords(`${d.title} ${d.text}`, PARAGRAPH_WORDS)).filter((p) => p.split(' ').length >= PARAGRAPH_WORDS * 0.9);
    const shorts = docs.map((d) => firstWords(d.text, SHORT_WORDS));
    return {
      short: shorts.slice(0, TEXTS_PER_CASE.short),
      paragraph: paragraphs.slice(0, TEXTS_PER_CASE.paragraph),
      source: 'SciFact abstracts (first words)',
    };
  }
  const vocabulary =
    'memory vector agent recall note meeting project deadline user prefers coffee tea morning report search index store query answer context'.split(' ');
  let seed = 42;
  const word = () => vocabulary[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % vocabulary.length]!;
  const sentence = (n: number) => Array.from({ length: n }, word).join(' ');
  return {
    short: Array.from({ length: TEXTS_PER_CASE.short }, () => sentence(SHORT_WORDS)),
    paragraph: Array.from({ length: TEXTS_PER_CASE.paragraph }, () => sentence(PARAGRAPH_WORDS)),
    source: 'synthetic (SciFact corpus not found)',
  };
}

interface Row {
  mode: string;
  kind: string;
  batch: number;
  texts: number;
  seconds: number;
  /** CPU seconds of all threads per wall-clock second: how many cores the case kept busy. */
  cores: number;
}

async function measure(embedder: Embedder, list: readonly string[]): Promise<{ texts: number; seconds: number; cores: number }> {
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const vectors = await embedder.embed([...list]);
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  if (vectors.length !== list.length) throw new Error('embedder returned the wrong number of vectors');
  return { texts: list.length, seconds, cores: (cpu.user + cpu.system) / 1e6 / seconds };
}

interface PoolClass {
  start(spec: ReturnType<typeof bundledUseSpec>, options: { workers: number; batchSize: number }): Promise<Embedder>;
}

async function compareWithBaseline(baselinePath: string) {
  const started = performance.now();
  const { EmbeddingPool: Baseline } = (await import(pathToFileURL(path.resolve(baselinePath)).href)) as { EmbeddingPool: PoolClass };
  const baselineSpecModule = path.join(path.dirname(path.resolve(baselinePath)), 'embedder-module-spec.ts');
  const { bundledUseSpec: baselineSpec } = (existsSync(baselineSpecModule) ? await import(pathToFileURL(baselineSpecModule).href) : { bundledUseSpec }) as {
    bundledUseSpec: typeof bundledUseSpec;
  };
  const workerCounts = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const texts = loadTexts();
  console.log(
    `embedder-throughput, baseline ${baselinePath} vs current pool: bundled:use-lite, node ${process.version}, ` +
      `${os.availableParallelism()} cores; texts: ${texts.source}; ${rounds} alternating rounds per case, median texts/s\n`,
  );
  const kinds = [
    ['short', texts.short],
    ['paragraph', texts.paragraph],
  ] as const;
  const header = ['workers', 'texts', 'batch', 'baseline texts/s', 'current texts/s', 'current / baseline'];
  const lines: string[][] = [];
  const ratios = new Map<number, number[]>();
  for (const workers of workerCounts) {
    for (const batch of BATCH_SIZES) {
      const pools = {
        baseline: await Baseline.start(baselineSpec({ batchSize: batch }), { workers, batchSize: batch }),
        current: await EmbeddingPool.start(bundledUseSpec({ batchSize: batch }), { workers, batchSize: batch }),
      };
      for (const pool of Object.values(pools)) await Promise.all(texts.short.slice(0, workers).map((t) => pool.embed([t])));
      for (const [kind, list] of kinds) {
        const rates = { baseline: [] as number[], current: [] as number[] };
        for (let round = 0; round < rounds; round++) {
          const order = round % 2 === 0 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const);
          for (const name of order) {
            const { texts: count, seconds } = await measure(pools[name], list);
            rates[name].push(count / seconds);
          }
        }
        const [baseline, current] = [median(rates.baseline), median(rates.current)];
        ratios.set(workers, [...(ratios.get(workers) ?? []), current / baseline]);
        lines.push([String(workers), kind, String(batch), baseline.toFixed(1), current.toFixed(1), `${(current / baseline).toFixed(3)}x`]);
        console.log(`  ${lines.at(-1)!.join(' ')} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
      }
      await Promise.all(Object.values(pools).map((pool) => pool.close()));
    }
  }
  printTable(header, lines, 3);
  for (const [workers, list] of ratios) {
    const geomean = Math.exp(list.reduce((sum, r) => sum + Math.log(r), 0) / list.length);
    console.log(`${workers} workers: current / baseline, geometric mean over cases: ${geomean.toFixed(3)}x`);
  }
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s`);
  console.log(
    `load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (other processes compete for the same cores)`,
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A markdown table: the first `textColumns` columns left-aligned, the rest right-aligned. */
function printTable(header: string[], rows: string[][], textColumns: number) {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((l) => l[i]!.length)));
  const format = (l: string[]) => `| ${l.map((cell, i) => (i < textColumns ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  console.log(`\n${format(header)}\n|${widths.map((w, i) => (i < textColumns ? `${'-'.repeat(w + 2)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const l of rows) console.log(format(l));
}

async function main() {
  const started = performance.now();
  const texts = loadTexts();
  const workers = os.availableParallelism();
  console.log(
    `embedder-throughput: bundled:use-lite, node ${process.version}, ${workers} cores, pool of ${workers} workers; ` +
      `texts: ${texts.source}; ${TEXTS_PER_CASE.short} short (~${SHORT_WORDS} words) and ` +
      `${TEXTS_PER_CASE.paragraph} paragraphs (~${PARAGRAPH_WORDS} words) per case\n`,
  );
  const rows: Row[] = [];
  const kinds = [
    ['short', texts.short],
    ['paragraph', texts.paragraph],
  ] as const;

  for (const batch of BATCH_SIZES) {
    const local = await BundledUseEmbedder.load({ batchSize: batch });
    await local.embed(texts.short.slice(0, 4)); // warm-up: first call compiles kernels
    for (const [kind, list] of kinds) rows.push({ mode: 'in-process', kind, batch, ...(await measure(local, list)) });
    await local.close();

    const pool = await EmbeddingPool.start(bundledUseSpec({ batchSize: batch }), { workers, batchSize: batch });
    // Concurrent one-text calls land on different idle workers, so every worker gets warmed up.
    await Promise.all(texts.short.slice(0, workers).map((t) => pool.embed([t])));
    for (const [kind, list] of kinds) rows.push({ mode: `pool x${workers}`, kind, batch, ...(await measure(pool, list)) });
    await pool.close();
    console.log(`  batch ${batch} done (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }

  const header = ['texts', 'batch', 'in-process texts/s', '(cores)', `pool x${workers} texts/s`, '(cores)', 'speed-up'];
  const lines = [header];
  for (const [kind] of kinds) {
    for (const batch of BATCH_SIZES) {
      const find = (mode: string) => rows.find((r) => r.kind === kind && r.batch === batch && r.mode.startsWith(mode))!;
      const local = find('in-process');
      const pooled = find('pool');
      const rate = (r: Row) => r.texts / r.seconds;
      lines.push([
        kind,
        String(batch),
        rate(local).toFixed(1),
        local.cores.toFixed(2),
        rate(pooled).toFixed(1),
        pooled.cores.toFixed(2),
        `${(rate(pooled) / rate(local)).toFixed(2)}x`,
      ]);
    }
  }
  printTable(header, lines.slice(1), 2);

  const staticModel = await loadStaticIfBuilt();
  if (staticModel) {
    const bundled = await BundledUseEmbedder.load({ batchSize: 32 });
    await bundled.embed(texts.short.slice(0, 4));
    const rates = { bundled: await embedRates(bundled, texts), static: await embedRates(staticModel, texts) };
    await bundled.close();
    const best = (kind: string) => Math.max(...rows.filter((r) => r.kind === kind && r.mode.startsWith('pool')).map((r) => r.texts / r.seconds));
    printStaticAgainstBundled(staticModel.id, rates, { short: best('short'), paragraph: best('paragraph'), workers });
  } else {
    console.log('\nno static model built (models/static-use-lite): `npm run train:static-embedder` adds its row');
  }
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s; (cores) = CPU time of all threads / wall time`);
  console.log(
    `load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (other processes compete for the same cores)`,
  );
}

const baselinePool = process.env.BENCH_BASELINE_POOL;
(baselinePool ? compareWithBaseline(baselinePool) : main()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
