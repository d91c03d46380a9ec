import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { l2Normalize } from '../../src/embeddings/l2-normalize.js';
import { OpenAiEmbedder } from '../../src/embeddings/openai-embedder.js';
import { FAKE_DEFAULT_DIMENSIONS, fakeVector, startFakeEmbeddingsServer, type FakeEmbeddingsServer } from '../../testkit/fake-embeddings-server.js';
import { expectUnitVectors, maxAbsDifference } from './support/vector-assertions.js';

describe('OpenAiEmbedder against a local OpenAI-compatible server', () => {
  let server: FakeEmbeddingsServer;
  beforeAll(async () => {
    server = await startFakeEmbeddingsServer();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  afterAll(async () => {
    await server?.close();
  });

  const create = (options: Partial<Parameters<typeof OpenAiEmbedder.create>[0]> = {}) =>
    OpenAiEmbedder.create({ model: 'test-embed', baseURL: server.baseURL, apiKey: 'test-key', maxRetries: 0, ...options });

  it('learns the dimensions from a probe call when none are configured', async () => {
    const embedder = await create();
    expect(embedder.id).toBe('openai:test-embed');
    expect(embedder.dimensions).toBe(FAKE_DEFAULT_DIMENSIONS);
    expect(embedder.maxInputTokens).toBe(8191);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.body).not.toHaveProperty('dimensions');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer test-key');
  });

  it('batches, restores input order from `index`, and normalises', async () => {
    const embedder = await create({ dimensions: 4, batchSize: 3 });
    expect(server.requests).toHaveLength(0); // configured dimensions: no probe
    const texts = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'];
    const vectors = await embedder.embed(texts);

    expect(server.requests.map((r) => r.body.input)).toEqual([texts.slice(0, 3), texts.slice(3, 6), texts.slice(6)]);
    for (const r of server.requests) {
      expect(r.body).toMatchObject({ model: 'test-embed', dimensions: 4, encoding_format: 'float' });
    }
    expectUnitVectors(vectors, 4);
    const expected = texts.map((t) => l2Normalize(fakeVector(t, 4)));
    expect(maxAbsDifference(vectors, expected)).toBeLessThan(1e-9);
  });

  it('sends a space for empty texts, which the API would reject', async () => {
    const embedder = await create({ dimensions: 4 });
    const vectors = await embedder.embed(['', 'x']);
    expect(vectors).toHaveLength(2);
    expect(server.requests[0]!.body.input).toEqual([' ', 'x']);
  });

  it('surfaces HTTP errors, and retries them when allowed', async () => {
    const embedder = await create({ dimensions: 4 });
    server.failNext(400);
    await expect(embedder.embed(['a'])).rejects.toThrow(/scripted 400/);

    const retrying = await create({ dimensions: 4, maxRetries: 1 });
    server.failNext(500);
    expect(await retrying.embed(['a'])).toHaveLength(1);
  });

  it('rejects answers of the wrong width or with missing items', async () => {
    const embedder = await create({ dimensions: 4 });
    server.ignoreDimensions = true;
    try {
      await expect(embedder.embed(['a'])).rejects.toThrow(/6-dimensional vector; expected 4/);
    } finally {
      server.ignoreDimensions = false;
    }
    server.tamper = (data) => data.slice(1);
    try {
      await expect(embedder.embed(['a', 'b'])).rejects.toThrow(/1 embeddings for 2 inputs/);
    } finally {
      server.tamper = undefined;
    }
  });

  it('honours an aborted signal', async () => {
    const embedder = await create({ dimensions: 4 });
    await expect(embedder.embed(['a'], { signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    expect(server.requests).toHaveLength(0);
  });
});
