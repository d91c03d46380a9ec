import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Embedder } from '../../../src/embeddings/embedder.js';
import { StaticEmbedder } from '../../../src/embeddings/static-embedder.js';
import { DEFAULT_STATIC_MODEL_DIR } from '../../../src/embeddings/static-model-files.js';
import { STATIC_MODEL_FILES } from '../../../src/embeddings/static-model-format.js';

export interface EmbedRates {
  shortPerSecond: number;
  paragraphPerSecond: number;
  /** Median wall time of one short text embedded alone, as a query is. */
  queryMs: number;
}

/** Rates of an embedder over the bench's texts, each case repeated until it has run `minSeconds`. */
export async function embedRates(embedder: Embedder, texts: { short: string[]; paragraph: string[] }, minSeconds = 1): Promise<EmbedRates> {
  const rate = async (list: string[]) => {
    let done = 0;
    const start = performance.now();
    do {
      await embedder.embed([...list]);
      done += list.length;
    } while (performance.now() - start < minSeconds * 1000);
    return done / ((performance.now() - start) / 1000);
  };
  const shortPerSecond = await rate(texts.short);
  const paragraphPerSecond = await rate(texts.paragraph);
  const times: number[] = [];
  for (const text of texts.short) {
    const start = performance.now();
    await embedder.embed([text]);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { shortPerSecond, paragraphPerSecond, queryMs: times[Math.floor(times.length / 2)]! };
}

/** The distilled static model of the repository (EMBEDDING_MODEL to name another folder), if built. */
export async function loadStaticIfBuilt(): Promise<StaticEmbedder | undefined> {
  const directory = process.env.EMBEDDING_MODEL ?? DEFAULT_STATIC_MODEL_DIR;
  if (!existsSync(path.join(directory, STATIC_MODEL_FILES.manifest))) return undefined;
  return StaticEmbedder.load({ directory });
}

/** Static against the bundled model, both in this thread, and against the bundled pool's best rate. */
export function printStaticAgainstBundled(
  staticId: string,
  rates: { static: EmbedRates; bundled: EmbedRates },
  bestPool: { short: number; paragraph: number; workers: number },
): void {
  const f = (n: number) => n.toFixed(1);
  console.log(`\nstatic (${staticId}) against bundled:use-lite, one run; both in this thread, batch 32 for the bundled model\n`);
  console.log('| texts | bundled texts/s | bundled pool best | static texts/s | static / bundled | static / pool |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const kind of ['short', 'paragraph'] as const) {
    const s = kind === 'short' ? rates.static.shortPerSecond : rates.static.paragraphPerSecond;
    const b = kind === 'short' ? rates.bundled.shortPerSecond : rates.bundled.paragraphPerSecond;
    console.log(`| ${kind} | ${f(b)} | ${f(bestPool[kind])} (x${bestPool.workers}) | ${f(s)} | ${(s / b).toFixed(0)}x | ${(s / bestPool[kind]).toFixed(0)}x |`);
  }
  console.log(
    `\none short query alone, median: static ${rates.static.queryMs.toFixed(3)} ms, bundled ${rates.bundled.queryMs.toFixed(2)} ms ` +
      `(${(rates.bundled.queryMs / rates.static.queryMs).toFixed(0)}x)`,
  );
}
