import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { env } from '@huggingface/transformers';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CrossEncoderModel } from '../../../src/retrieval/rerank/cross-encoder-model.js';
import { CrossEncoderReranker } from '../../../src/retrieval/rerank/cross-encoder-reranker.js';
import { CrossEncoderWorkers } from '../../../src/retrieval/rerank/cross-encoder-workers.js';
import { TINY_CROSS_ENCODER, expectedOverlap, writeTinyCrossEncoderModel } from './support/tiny-cross-encoder-model.js';

const QUERY = 'the cat sat on the mat';
// Shared counted words with QUERY: 0, 1, 6, 3, 0 (see expectedOverlap).
const HITS = [
  { id: 'none', text: 'zebra xylophone', score: 0.9 },
  { id: 'one', text: 'a dog ran in the park', score: 0.8 },
  { id: 'all', text: 'The cat sat on the mat.', score: 0.1 },
  { id: 'some', text: 'the cat ran to the moon', score: 0.5 },
  { id: 'empty', text: '', score: 0.2 },
];

describe('cross-encoder reranking on a generated tiny cross-encoder', () => {
  let root: string;
  let singleLogit: string;
  let twoLabels: string;
  let model: CrossEncoderModel;
  const originalFetch = env.fetch;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'memrag-cross-encoder-'));
    singleLogit = await writeTinyCrossEncoderModel(path.join(root, 'tiny-cross-encoder'));
    twoLabels = await writeTinyCrossEncoderModel(path.join(root, 'tiny-two-label'), { labels: 2 });
    model = await CrossEncoderModel.load({ model: singleLogit });
  });
  afterEach(() => {
    env.fetch = originalFetch;
    vi.unstubAllGlobals();
  });
  afterAll(async () => {
    await model?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  describe('CrossEncoderModel', () => {
    it('loads from a folder, with the input limit from the tokenizer', () => {
      expect(model.id).toBe('cross-encoder:tiny-cross-encoder');
      expect(model.maxLength).toBe(TINY_CROSS_ENCODER.maxLength);
    });

    it('scores each pair with its single logit, in a padded batch', async () => {
      const scores = await model.score(
        QUERY,
        HITS.map((h) => h.text),
      );
      expect(scores).toEqual(HITS.map((h) => expectedOverlap(QUERY, h.text)));
      expect(scores).toEqual([0, 1, 6, 3, 0]);
    });

    it('scores a two-label model by its positive class (log-odds over the negative one)', async () => {
      const two = await CrossEncoderModel.load({ model: twoLabels });
      try {
        // The graph emits [-overlap, overlap]: log-odds 2 x overlap.
        expect(await two.score(QUERY, ['the cat sat', 'zebra'])).toEqual([6, 0]);
      } finally {
        await two.close();
      }
    });

    it('truncates a long passage to the model limit instead of failing', async () => {
      const filler = Array.from({ length: 200 }, () => 'zebra').join(' ');
      // "cat" first is within the limit; after the filler it is cut off.
      const [early, late] = await model.score('cat', [`cat ${filler}`, `${filler} cat`]);
      expect(early).toBe(1);
      expect(late).toBe(0);
    });

    it('does not let a long query push the passage out', async () => {
      const longQuery = `moon ${Array.from({ length: 200 }, () => 'zebra').join(' ')}`;
      const [score] = await model.score(longQuery, ['moon river']);
      expect(score).toBe(1);
    });

    it('honours a lower maxLength', async () => {
      const short = await CrossEncoderModel.load({ model: singleLogit, maxLength: 8 });
      try {
        expect(short.maxLength).toBe(8);
        // [CLS] cat [SEP] + 4 passage tokens + [SEP]: "cat" as the fifth passage word is cut.
        expect(await short.score('cat', ['cat', 'red blue green sun cat'])).toEqual([1, 0]);
      } finally {
        await short.close();
      }
    });

    it('loads a hub-style id from the cache dir without touching the network', async () => {
      const cacheDir = path.join(root, 'cache');
      await writeTinyCrossEncoderModel(path.join(cacheDir, 'memrag-test', 'cached-cross-encoder'));
      const attempt = vi.fn(async (url: unknown) => {
        throw new Error(`network access attempted: ${String(url)}`);
      });
      env.fetch = attempt as unknown as typeof env.fetch;
      vi.stubGlobal('fetch', attempt);
      const cached = await CrossEncoderModel.load({ model: 'memrag-test/cached-cross-encoder', cacheDir, allowRemote: false });
      try {
        expect(cached.id).toBe('cross-encoder:memrag-test/cached-cross-encoder');
        expect(await cached.score('cat', ['the cat'])).toEqual([1]);
      } finally {
        await cached.close();
      }
      await expect(CrossEncoderModel.load({ model: 'memrag-test/not-downloaded', cacheDir, allowRemote: false })).rejects.toThrow();
      expect(attempt).not.toHaveBeenCalled();
    });
  });

  describe('CrossEncoderReranker in this thread', () => {
    it('reorders by the model score and returns topK with rerankScore', async () => {
      const reranker = new CrossEncoderReranker(model, 2);
      const ranked = await reranker.rerank(QUERY, HITS, 3);
      expect(ranked.map((h) => [h.id, h.rerankScore])).toEqual([
        ['all', 6],
        ['some', 3],
        ['one', 1],
      ]);
      // The hits come back whole, first-stage score included.
      expect(ranked[0]).toMatchObject({ text: 'The cat sat on the mat.', score: 0.1 });
    });

    it('breaks ties by the first-stage score, then by the first-stage order', async () => {
      const reranker = new CrossEncoderReranker(model, 2);
      const tied = [
        { id: 'low', text: 'cat', score: 0.2 },
        { id: 'first', text: 'zebra', score: 0.5 },
        { id: 'high', text: 'cat', score: 0.7 },
        { id: 'second', text: 'xylophone', score: 0.5 },
        { id: 'unscored', text: 'cat' },
      ];
      const ranked = await reranker.rerank('cat', tied, 5);
      expect(ranked.map((h) => h.id)).toEqual(['high', 'low', 'unscored', 'first', 'second']);
    });

    it('returns nothing for no hits or topK 0, and stops on an aborted signal', async () => {
      const reranker = new CrossEncoderReranker(model);
      expect(await reranker.rerank(QUERY, [], 5)).toEqual([]);
      expect(await reranker.rerank(QUERY, HITS, 0)).toEqual([]);
      const controller = new AbortController();
      controller.abort(new Error('client went away'));
      await expect(reranker.rerank(QUERY, HITS, 3, { signal: controller.signal })).rejects.toThrow('client went away');
    });
  });

  describe('CrossEncoderReranker in worker threads', () => {
    let workers: CrossEncoderReranker;
    beforeAll(async () => {
      workers = await CrossEncoderReranker.load({ model: singleLogit, workers: 2, batchSize: 2 });
    });
    afterAll(async () => {
      await workers?.close();
    });

    it('gives the in-thread ranking', async () => {
      const inThread = await new CrossEncoderReranker(model, 2).rerank(QUERY, HITS, 5);
      const ranked = await workers.rerank(QUERY, HITS, 5);
      expect(workers.id).toBe('cross-encoder:tiny-cross-encoder');
      expect(workers.maxLength).toBe(TINY_CROSS_ENCODER.maxLength);
      expect(ranked).toEqual(inThread);
    });

    it('serves concurrent calls without mixing them up', async () => {
      const queries = ['cat', 'dog park', 'moon', QUERY];
      const results = await Promise.all(queries.map((q) => workers.rerank(q, HITS, 5)));
      results.forEach((ranked, i) => {
        for (const hit of ranked) expect(hit.rerankScore).toBe(expectedOverlap(queries[i]!, hit.text));
      });
    });

    it('rejects a call aborted while its batches wait', async () => {
      const controller = new AbortController();
      const many = Array.from({ length: 40 }, (_, i) => ({ id: String(i), text: `the cat number ${i}` }));
      const pending = workers.rerank('cat', many, 5, { signal: controller.signal });
      controller.abort(new Error('client went away'));
      await expect(pending).rejects.toThrow('client went away');
      // The workers are still usable afterwards.
      expect((await workers.rerank('cat', HITS, 1))[0]?.rerankScore).toBe(1);
    });

    it('fails to start on a folder that is not a model, and rejects after close', async () => {
      await expect(CrossEncoderWorkers.start({ model: path.join(root, 'missing'), workers: 1 })).rejects.toThrow();
      const other = await CrossEncoderReranker.load({ model: singleLogit, workers: 1 });
      await other.close();
      await expect(other.rerank(QUERY, HITS, 1)).rejects.toThrow(/closed/);
    });
  });
});
