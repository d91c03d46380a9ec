import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { env } from '@huggingface/transformers';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TransformersEmbedder } from '../../src/embeddings/transformers-embedder.js';
import { TINY_BERT, writeTinyBertModel } from './support/tiny-bert-model.js';
import { cosine, expectUnitVectors, maxAbsDifference } from './support/vector-assertions.js';

describe('TransformersEmbedder on a generated tiny BERT', () => {
  let root: string;
  let modelDir: string;
  let cacheDir: string;
  let embedder: TransformersEmbedder;
  const originalFetch = env.fetch;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'memrag-tiny-bert-'));
    modelDir = await writeTinyBertModel(path.join(root, 'tiny-bert'));
    // The same files laid out as transformers.js caches a hub download: <cacheDir>/<owner>/<name>/...
    cacheDir = path.join(root, 'cache');
    await writeTinyBertModel(path.join(cacheDir, 'memrag-test', 'cached-bert'));
    embedder = await TransformersEmbedder.load({ model: modelDir, batchSize: 3 });
  });
  afterEach(() => {
    env.fetch = originalFetch;
    vi.unstubAllGlobals();
  });
  afterAll(async () => {
    await embedder?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** Any network attempt, through transformers.js or directly, is recorded and fails. */
  function forbidNetwork() {
    const attempt = vi.fn(async (url: unknown) => {
      throw new Error(`network access attempted: ${String(url)}`);
    });
    env.fetch = attempt as unknown as typeof env.fetch;
    vi.stubGlobal('fetch', attempt);
    return attempt;
  }

  it('detects dimensions from a probe and the input limit from the tokenizer', () => {
    expect(embedder.id).toBe('transformers:tiny-bert');
    expect(embedder.dimensions).toBe(TINY_BERT.hiddenSize);
    expect(embedder.maxInputTokens).toBe(TINY_BERT.maxLength);
  });

  it('returns unit vectors, equal for equal texts and different for different texts', async () => {
    const vectors = await embedder.embed(['The cat sat on the mat.', 'A dog ran in the park!', 'The cat sat on the mat.', 'vector search over memory', '']);
    expect(vectors).toHaveLength(5);
    expectUnitVectors(vectors, TINY_BERT.hiddenSize);
    expect(maxAbsDifference([vectors[0]!], [vectors[2]!])).toBeLessThan(1e-6);
    expect(cosine(vectors[0]!, vectors[1]!)).toBeLessThan(0.99);
    expect(cosine(vectors[0]!, vectors[3]!)).toBeLessThan(0.99);
  });

  it('does not let padding change a vector', async () => {
    const texts = ['cat', 'the dog ran in the green park with a red book', 'moon'];
    const together = await embedder.embed(texts);
    const alone = [];
    for (const text of texts) alone.push(...(await embedder.embed([text])));
    expect(maxAbsDifference(together, alone)).toBeLessThan(1e-5);
  });

  it('truncates to the model limit instead of failing', async () => {
    const long = Array.from({ length: 40 }, () => 'memory').join(' ');
    const [a, b] = await embedder.embed([long, `${long} river bank money loan`]);
    expect(maxAbsDifference([a!], [b!])).toBeLessThan(1e-6);
  });

  it('loads a hub-style id from the cache dir without touching the network', async () => {
    const attempt = forbidNetwork();
    const cached = await TransformersEmbedder.load({ model: 'memrag-test/cached-bert', cacheDir, allowRemote: false });
    try {
      expect(cached.id).toBe('transformers:memrag-test/cached-bert');
      const [fromCache] = await cached.embed(['the cat sat']);
      const [fromFolder] = await embedder.embed(['the cat sat']);
      expect(maxAbsDifference([fromCache!], [fromFolder!])).toBeLessThan(1e-6);
    } finally {
      await cached.close();
    }
    expect(attempt).not.toHaveBeenCalled();
  });

  it('with remote loading disabled, fails on a missing model without trying the network', async () => {
    const attempt = forbidNetwork();
    await expect(TransformersEmbedder.load({ model: 'memrag-test/not-downloaded', cacheDir, allowRemote: false })).rejects.toThrow(
      /allowRemoteModels=false|local_files_only/,
    );
    expect(attempt).not.toHaveBeenCalled();
  });

  it('with remote loading enabled, goes to the hub for a missing model (so the spy above is meaningful)', async () => {
    const attempt = forbidNetwork();
    await expect(TransformersEmbedder.load({ model: 'memrag-test/not-downloaded', cacheDir, allowRemote: true })).rejects.toThrow();
    expect(attempt).toHaveBeenCalled();
    expect(String(attempt.mock.calls[0]![0])).toContain('huggingface.co/memrag-test/not-downloaded');
  });

  it('rejects after close', async () => {
    const other = await TransformersEmbedder.load({ model: modelDir });
    await other.close();
    await expect(other.embed(['x'])).rejects.toThrow(/closed/);
  });
});
