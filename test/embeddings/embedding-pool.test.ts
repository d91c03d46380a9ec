import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundledUseEmbedder } from '../../src/embeddings/bundled-use-embedder.js';
import { bundledUseSpec, type EmbedderModuleSpec } from '../../src/embeddings/embedder-module-spec.js';
import { EmbeddingPool, EmbeddingWorkerCrashedError } from '../../src/embeddings/embedding-pool.js';
import type { ScriptedEmbedderOptions } from './support/scripted-embedder.js';
import { expectUnitVectors, maxAbsDifference } from './support/vector-assertions.js';

const scripted = (options: ScriptedEmbedderOptions = {}): EmbedderModuleSpec => ({
  moduleUrl: new URL('./support/scripted-embedder.ts', import.meta.url).href,
  exportName: 'createScriptedEmbedder',
  options,
});

const abstracts = Array.from(
  { length: 40 },
  (_, i) =>
    `Abstract ${i}: we measured ${i * 3} samples of ${['protein', 'memory', 'cell', 'vector', 'river'][i % 5]} ` +
    `behaviour and found that ${i % 2 ? 'it increases' : 'nothing changes'} under condition ${i}.`,
);

describe('EmbeddingPool with the bundled model', () => {
  let pool: EmbeddingPool;
  let local: BundledUseEmbedder;
  beforeAll(async () => {
    [pool, local] = await Promise.all([EmbeddingPool.start(bundledUseSpec(), { workers: 2, batchSize: 8 }), BundledUseEmbedder.load()]);
  });
  afterAll(async () => {
    await Promise.all([pool?.close(), local?.close()]);
  });

  it('reports the wrapped embedder identity', () => {
    expect(pool.id).toBe('bundled:use-lite');
    expect(pool.dimensions).toBe(512);
    expect(pool.maxInputTokens).toBe(128);
    // One worker kept; the other starts for bulk work.
    expect(pool.size).toBe(1);
  });

  it('returns the in-process vectors, in order', async () => {
    const [pooled, inProcess] = await Promise.all([pool.embed(abstracts), local.embed(abstracts)]);
    expect(pooled).toHaveLength(40);
    expectUnitVectors(pooled, 512);
    expect(maxAbsDifference(pooled, inProcess)).toBeLessThan(1e-5);
  });

  it('serves concurrent calls without mixing them up', async () => {
    const [a, b, empty] = await Promise.all([pool.embed(abstracts.slice(0, 13)), pool.embed(abstracts.slice(13)), pool.embed([])]);
    const whole = await local.embed(abstracts);
    expect(maxAbsDifference([...a, ...b], whole)).toBeLessThan(1e-5);
    expect(empty).toEqual([]);
  });

  it('gives each of many concurrent one-text calls the vector of its own text', async () => {
    const texts = abstracts.slice(0, 24);
    const [pooled, inProcess] = await Promise.all([
      Promise.all(texts.map(async (text) => (await pool.embed([text]))[0]!)),
      Promise.all(texts.map(async (text) => (await local.embed([text]))[0]!)),
    ]);
    expect(maxAbsDifference(pooled, inProcess)).toBeLessThan(1e-5);
  });
});

describe('EmbeddingPool dispatch and failure handling', () => {
  let pool: EmbeddingPool;
  beforeAll(async () => {
    pool = await EmbeddingPool.start(scripted(), { workers: 2, minWorkers: 2, batchSize: 2 });
  });
  afterAll(async () => {
    await pool?.close();
  });

  it('spreads a call smaller than workers x batch size over all workers', async () => {
    const wide = await EmbeddingPool.start(scripted(), { workers: 2, minWorkers: 2, batchSize: 32 });
    try {
      const start = performance.now();
      await wide.embed(['slow', 'slow']);
      // One worker would take 600 ms for the two.
      expect(performance.now() - start).toBeLessThan(550);
    } finally {
      await wide.close();
    }
  });

  it('keeps a worker less than it may run, and starts the last for bulk work that finds the others busy', async () => {
    const elastic = await EmbeddingPool.start(scripted(), { workers: 2, batchSize: 32 });
    try {
      expect(elastic.size).toBe(1);
      // Small calls beside a busy worker wait for it.
      await Promise.all([elastic.embed(['slow']), elastic.embed(['a']), elastic.embed(['b'])]);
      expect(elastic.size).toBe(1);
      // A call of 16 is cut in two batches of 8, each big enough for a worker of its own.
      const bulk = ['slow', ...Array.from({ length: 15 }, (_, i) => `t${i}`)];
      expect(await elastic.embed(bulk)).toHaveLength(16);
      expect(elastic.size).toBe(2);
    } finally {
      await elastic.close();
    }
  });

  it('imported sessions of a few turns never started the last worker: the shares of a small bulk call start it too', async () => {
    const elastic = await EmbeddingPool.start(scripted(), { workers: 2, batchSize: 32 });
    try {
      expect(elastic.size).toBe(1);
      // Five texts are cut in shares of 3 and 2, each below a big batch: the second finds the kept worker busy.
      expect(await elastic.embed(['slow', 'a', 'b', 'c', 'd'])).toHaveLength(5);
      expect(elastic.size).toBe(1);
      expect(await elastic.embed(['slow', 'a', 'b', 'c', 'd'], { bulk: true })).toHaveLength(5);
      expect(elastic.size).toBe(2);
    } finally {
      await elastic.close();
    }
  });

  it('embeds the small calls a busy worker holds in one model call', async () => {
    const one = await EmbeddingPool.start(scripted(), { workers: 1, batchSize: 2 });
    try {
      const busy = one.embed(['slow']);
      const waiting = await Promise.all([busy, ...Array.from({ length: 5 }, () => one.embed(['size']))]);
      expect(waiting.slice(1).map(([vector]) => vector![0])).toEqual([5, 5, 5, 5, 5]);
    } finally {
      await one.close();
    }
  });

  it('rejects with the error thrown inside the worker and keeps serving', async () => {
    await expect(pool.embed(['a', 'b', 'throw', 'c'])).rejects.toThrow('scripted embed failure');
    expect(pool.size).toBe(2);
    expect(await pool.embed(['a', 'b', 'c'])).toHaveLength(3);
  });

  it('rejects the batch of a crashed worker, then replaces the worker', async () => {
    await expect(pool.embed(['a', 'crash'])).rejects.toBeInstanceOf(EmbeddingWorkerCrashedError);
    await expect(pool.embed(['a', 'crash'])).rejects.toThrow(/scripted worker crash/);
    const vectors = await pool.embed(['x', 'y', 'z', 'w', 'v']);
    expect(vectors).toHaveLength(5);
    expectUnitVectors(vectors, 4);
    expect(pool.size).toBe(2);
  });

  it('workers sat idle while this thread was busy: a worker holds its next batch and starts it on its own', async () => {
    const single = await EmbeddingPool.start(scripted(), { workers: 1, batchSize: 1 });
    try {
      const pending = single.embed(['clock', 'clock']);
      // A PGlite statement or a long parse blocks this thread the same way.
      const blockedUntil = Date.now() + 400;
      while (Date.now() < blockedUntil);
      const [first, second] = await pending;
      expect(first![0]).toBeLessThan(blockedUntil);
      expect(second![0]).toBeLessThan(blockedUntil);
    } finally {
      await single.close();
    }
  });

  it('a batch held behind one that crashes its worker is served by the replacement, not rejected', async () => {
    const single = await EmbeddingPool.start(scripted(), { workers: 1, batchSize: 1 });
    try {
      const crashing = single.embed(['crash']);
      const behind = single.embed(['x']);
      await expect(crashing).rejects.toBeInstanceOf(EmbeddingWorkerCrashedError);
      expect(await behind).toEqual(await single.embed(['x']));
      expect(single.size).toBe(1);
    } finally {
      await single.close();
    }
  });

  it('stops waiting when the signal aborts', async () => {
    const controller = new AbortController();
    const pending = pool.embed(['slow', 'a', 'b', 'c', 'd', 'e'], { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
    expect(await pool.embed(['after abort'])).toHaveLength(1);
  });

  it('fails to start when the embedder cannot be built', async () => {
    await expect(EmbeddingPool.start(scripted({ failInit: true }), { workers: 2 })).rejects.toThrow('scripted init failure');
  });

  it('rejects calls after close', async () => {
    const other = await EmbeddingPool.start(scripted(), { workers: 1 });
    const inFlight = expect(other.embed(['slow'])).rejects.toThrow(/closed/);
    await other.close();
    await inFlight;
    await expect(other.embed(['x'])).rejects.toThrow(/closed/);
  });
});

describe('EmbeddingPool.lazy', () => {
  const identity = { id: 'test:scripted-4', dimensions: 4, maxInputTokens: 64 };

  it('starts no worker until the first embed, then serves as a started pool does', async () => {
    const pool = EmbeddingPool.lazy(scripted(), identity, { workers: 2 });
    try {
      expect([pool.id, pool.dimensions, pool.maxInputTokens, pool.size, pool.started, pool.alive()]).toEqual(['test:scripted-4', 4, 64, 2, false, true]);
      const [a, b] = await Promise.all([pool.embed(['one']), pool.embed(['two', 'three'])]);
      expect(pool.started).toBe(true);
      expect([a, b].flat()).toHaveLength(3);
    } finally {
      await pool.close();
    }
  });

  it('fails the first embed when the workers report another model, and starts afresh on the next', async () => {
    const pool = EmbeddingPool.lazy(scripted({ dimensions: 8 }), identity, { workers: 1 });
    try {
      await expect(pool.embed(['x'])).rejects.toThrow(/test:scripted-8 \(8 dimensions\), not the expected test:scripted-4/);
      expect(pool.started).toBe(false);
      await expect(pool.embed(['x'])).rejects.toThrow(/not the expected/);
    } finally {
      await pool.close();
    }
  });

  it('fails embeds when the model cannot be built, and closes without ever starting', async () => {
    const pool = EmbeddingPool.lazy(scripted({ failInit: true }), identity, { workers: 1 });
    await expect(pool.embed(['x'])).rejects.toThrow('scripted init failure');
    await pool.close();
    await expect(pool.embed(['x'])).rejects.toThrow(/closed/);
    expect(pool.size).toBe(0);
    expect(pool.alive()).toBe(false);
  });
});
