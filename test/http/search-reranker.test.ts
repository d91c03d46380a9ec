import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { writeTinyCrossEncoderModel } from '../retrieval/rerank/support/tiny-cross-encoder-model.js';
import { call, createApp, createTestContext } from './http-test-context.js';

// The tiny cross-encoder scores a pair by the vocabulary words query and passage share.
const QUERY = 'the cat sat on the mat';
const DOCUMENTS = [
  { title: 'Xyz', text: 'A dog ran in the park.' }, // shares "the": 1
  { title: 'Qzv', text: 'The cat sat on the mat.' }, // 6
  { title: 'Jkx', text: 'The cat ran to the moon.' }, // "the" twice and "cat": 3
];

let root: string;
let modelDir: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'memrag-search-reranker-'));
  modelDir = await writeTinyCrossEncoderModel(path.join(root, 'tiny-cross-encoder'));
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

async function ingestAll(app: Hono): Promise<Map<string, string>> {
  const titleById = new Map<string, string>();
  for (const doc of DOCUMENTS) {
    const res = await call(app, 'POST', '/v1/documents', doc);
    expect(res.status).toBe(201);
    titleById.set(res.body.document.id, doc.title);
  }
  return titleById;
}

describe('POST /v1/search with a cross-encoder configured (and made the default)', () => {
  let ctx: AppContext;
  let app: Hono;

  beforeAll(async () => {
    // One worker thread, as in production.
    ctx = await createTestContext({ RERANKER_MODEL: modelDir, RERANKER_DEFAULT: 'cross-encoder', RERANKER_WORKERS: '1' });
    app = createApp(ctx);
    await ingestAll(app);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('reorders the candidates by the model and returns rerankScore', async () => {
    expect(ctx.search.rerankers).toEqual(['none', 'lexical', 'cross-encoder']);
    const res = await call(app, 'POST', '/v1/search', { query: QUERY, topK: 3, reranker: 'cross-encoder' });
    expect(res.status).toBe(200);
    expect(res.body.hits.map((h: { title: string }) => h.title)).toEqual(['Qzv', 'Jkx', 'Xyz']);
    expect(res.body.hits.map((h: { rerankScore: number }) => h.rerankScore)).toEqual([6, 3, 1]);
    for (const hit of res.body.hits) expect(typeof hit.score).toBe('number');
  });

  it('applies RERANKER_DEFAULT when the request names no reranker, and none when asked', async () => {
    const byDefault = await call(app, 'POST', '/v1/search', { query: QUERY, topK: 1 });
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.hits[0]).toMatchObject({ title: 'Qzv', rerankScore: 6 });
    const none = await call(app, 'POST', '/v1/search', { query: QUERY, topK: 3, reranker: 'none' });
    expect(none.status).toBe(200);
    for (const hit of none.body.hits) expect(hit).not.toHaveProperty('rerankScore');
  });

  it('closes the cross-encoder with the context', async () => {
    const other = await createTestContext({ RERANKER_MODEL: modelDir, RERANKER_WORKERS: '0' });
    const crossEncoder = other.crossEncoder!;
    expect(crossEncoder.id).toBe('cross-encoder:tiny-cross-encoder');
    await other.close();
    await expect(crossEncoder.rerank('cat', [{ id: 'a', text: 'cat' }], 1)).rejects.toThrow(/closed/);
  });
});

describe('POST /v1/search without a cross-encoder', () => {
  let ctx: AppContext;
  let app: Hono;

  beforeAll(async () => {
    ctx = await createTestContext();
    app = createApp(ctx);
    await ingestAll(app);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('answers 400 naming reranker for cross-encoder, and serves the others', async () => {
    expect(ctx.crossEncoder).toBeUndefined();
    const res = await call(app, 'POST', '/v1/search', { query: QUERY, reranker: 'cross-encoder' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details).toEqual([{ path: 'reranker', message: expect.stringContaining('RERANKER_MODEL') }]);

    const lexical = await call(app, 'POST', '/v1/search', { query: QUERY, topK: 2, reranker: 'lexical' });
    expect(lexical.status).toBe(200);
    expect(typeof lexical.body.hits[0].rerankScore).toBe('number');
    // The default is none: first-stage order, no rerankScore.
    const plain = await call(app, 'POST', '/v1/search', { query: QUERY, topK: 2 });
    expect(plain.status).toBe(200);
    expect(plain.body.hits[0]).not.toHaveProperty('rerankScore');
  });
});

describe('reranker configuration', () => {
  it('refuses RERANKER_DEFAULT=cross-encoder without RERANKER_MODEL, naming both', async () => {
    const failure = await createTestContext({ RERANKER_DEFAULT: 'cross-encoder' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).variables).toEqual(['RERANKER_DEFAULT', 'RERANKER_MODEL']);
  });

  it('validates the RERANKER_* variables', () => {
    expect(loadConfig({})).toMatchObject({ RERANKER_DEFAULT: 'none', RERANKER_WORKERS: 1, RERANKER_BATCH_SIZE: 16 });
    expect(() => loadConfig({ RERANKER_DEFAULT: 'cross' })).toThrow(/RERANKER_DEFAULT/);
    expect(() => loadConfig({ RERANKER_WORKERS: '-1' })).toThrow(/RERANKER_WORKERS/);
  });
});
