import { seededRandom, shuffleInPlace } from './seeded-random.js';
import { splitSentences } from './split-sentences.js';
import type { TrainingSource } from './training-sources.js';

export interface TrainingSentences {
  train: string[];
  heldOut: string[];
  /** Sentences each source gave to the sample (after deduplication, first source wins). */
  sources: { name: string; sentences: number }[];
}

/**
 * Every source's sentences, deduplicated, shuffled by the seed and cut to `limit`; the last
 * `heldOutShare` of them are held out to measure the fit on sentences it never saw.
 */
export async function collectTrainingSentences(
  sources: TrainingSource[],
  options: { limit: number; seed: number; heldOutShare: number },
): Promise<TrainingSentences> {
  const origin = new Map<string, number>();
  for (const [index, source] of sources.entries()) {
    for (const text of await source.read()) for (const sentence of splitSentences(text)) if (!origin.has(sentence)) origin.set(sentence, index);
  }
  // Sorted first: the sample then depends on the seed and the sources' contents, not their reading order.
  const all = shuffleInPlace([...origin.keys()].sort(), seededRandom(options.seed)).slice(0, options.limit);
  const heldOutCount = Math.max(1, Math.round(all.length * options.heldOutShare));
  const counts = sources.map(() => 0);
  for (const sentence of all) counts[origin.get(sentence)!]! += 1;
  return {
    train: all.slice(0, all.length - heldOutCount),
    heldOut: all.slice(all.length - heldOutCount),
    sources: sources.map((s, i) => ({ name: s.name, sentences: counts[i]! })),
  };
}
