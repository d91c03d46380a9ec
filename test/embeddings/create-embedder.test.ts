import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { BundledUseEmbedder } from '../../src/embeddings/bundled-use-embedder.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { EmbeddingPool } from '../../src/embeddings/embedding-pool.js';
import { OpenAiEmbedder } from '../../src/embeddings/openai-embedder.js';
import { TransformersEmbedder } from '../../src/embeddings/transformers-embedder.js';
import { startFakeEmbeddingsServer, type FakeEmbeddingsServer } from '../../testkit/fake-embeddings-server.js';
import { TINY_BERT, writeTinyBertModel } from './support/tiny-bert-model.js';
import { maxAbsDifference } from './support/vector-assertions.js';

describe('createEmbedder', () => {
  let root: string;
  let modelDir: string;
  let server: FakeEmbeddingsServer;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'memrag-create-embedder-'));
    modelDir = await writeTinyBertModel(path.join(root, 'tiny-bert'));
    server = await startFakeEmbeddingsServer();
  });
  afterAll(async () => {
    await server?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const transformersConfig = (extra: Record<string, string> = {}) =>
    loadConfig({ EMBEDDING_PROVIDER: 'transformers', EMBEDDING_MODEL: modelDir, EMBEDDING_BATCH_SIZE: '2', ...extra });

  it('keeps every worker running beside a database server', async () => {
    const pooled = await createEmbedder(transformersConfig({ EMBEDDING_WORKERS: '2', DATABASE_URL: 'postgres://127.0.0.1:1/unused' }));
    try {
      expect((pooled as EmbeddingPool).size).toBe(2);
    } finally {
      await pooled.close();
    }
  });

  it('runs a local model in this thread with one worker, and in a pool with more', async () => {
    const inProcess = await createEmbedder(transformersConfig({ EMBEDDING_WORKERS: '1' }));
    const pooled = await createEmbedder(transformersConfig({ EMBEDDING_WORKERS: '2' }));
    try {
      expect(inProcess).toBeInstanceOf(TransformersEmbedder);
      expect(pooled).toBeInstanceOf(EmbeddingPool);
      // Embedded, of the two it may run the pool keeps one until bulk work wants the other.
      expect((pooled as EmbeddingPool).size).toBe(1);
      expect(pooled.id).toBe(inProcess.id);
      expect(pooled.dimensions).toBe(TINY_BERT.hiddenSize);
      const texts = ['the cat sat', 'a dog ran', 'memory search', 'red book', 'moon'];
      expect(maxAbsDifference(await pooled.embed(texts), await inProcess.embed(texts))).toBeLessThan(1e-5);
    } finally {
      await Promise.all([inProcess.close(), pooled.close()]);
    }
  });

  it('counts tokens in this thread as the model does, in a pool and in process', async () => {
    const inProcess = await createEmbedder(transformersConfig({ EMBEDDING_WORKERS: '1' }));
    const pooled = await createEmbedder(transformersConfig({ EMBEDDING_WORKERS: '2' }));
    const bundledPool = await createEmbedder(loadConfig({ EMBEDDING_PROVIDER: 'bundled', EMBEDDING_WORKERS: '2' }));
    const bundled = await createEmbedder(loadConfig({ EMBEDDING_PROVIDER: 'bundled', EMBEDDING_WORKERS: '0' }));
    try {
      // [CLS] the cat sat [SEP]: special tokens count against the limit too.
      expect(inProcess.countTokens!('the cat sat')).toBe(5);
      expect(pooled.countTokens!('the cat sat')).toBe(5);
      const text = 'Chunks must fit the window of the bundled Universal Sentence Encoder.';
      expect(bundledPool.countTokens!(text)).toBe(bundled.countTokens!(text));
      expect(bundled.countTokens!(text)).toBeGreaterThan(10);
    } finally {
      await Promise.all([inProcess.close(), pooled.close(), bundledPool.close(), bundled.close()]);
    }
  });

  it('treats EMBEDDING_WORKERS=0 as in-process for the bundled model', async () => {
    const embedder = await createEmbedder(loadConfig({ EMBEDDING_PROVIDER: 'bundled', EMBEDDING_WORKERS: '0' }));
    try {
      expect(embedder).toBeInstanceOf(BundledUseEmbedder);
      expect(embedder.id).toBe('bundled:use-lite');
    } finally {
      await embedder.close();
    }
  });

  it('requires EMBEDDING_MODEL for transformers', async () => {
    const error = await createEmbedder(loadConfig({ EMBEDDING_PROVIDER: 'transformers' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toEqual(['EMBEDDING_MODEL']);
  });

  it('refuses EMBEDDING_DIMENSIONS that the model does not produce', async () => {
    const error = await createEmbedder(transformersConfig({ EMBEDDING_WORKERS: '1', EMBEDDING_DIMENSIONS: '99' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toEqual(['EMBEDDING_DIMENSIONS']);
  });

  it('builds an OpenAI-compatible embedder from base URL, key, model and dimensions', async () => {
    const embedder = await createEmbedder(
      loadConfig({
        EMBEDDING_PROVIDER: 'openai',
        EMBEDDING_BASE_URL: server.baseURL,
        EMBEDDING_API_KEY: 'k',
        EMBEDDING_MODEL: 'test-embed',
        EMBEDDING_DIMENSIONS: '4',
      }),
    );
    expect(embedder).toBeInstanceOf(OpenAiEmbedder);
    expect(embedder.id).toBe('openai:test-embed');
    expect(await embedder.embed(['a', 'b'])).toHaveLength(2);
    expect(server.requests.at(-1)!.body).toMatchObject({ model: 'test-embed', dimensions: 4 });
    await embedder.close();
  });
});
