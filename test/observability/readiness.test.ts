import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { coalescingEmbedder } from '../../src/embeddings/coalescing-embedder.js';
import { rememberRecentVectors } from '../../src/embeddings/recent-vectors.js';
import { instrumentEmbedder } from '../../src/observability/instrumented-embedder.js';
import { checkReadiness } from '../../src/observability/readiness.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

describe('checkReadiness', () => {
  it('gives up on a database that does not answer within the timeout', async () => {
    // A server that accepts connections but never answers: the worst case for a probe.
    const hanging = { db: { execute: () => new Promise(() => {}) }, driver: 'pg', close: async () => {} } as unknown as Database;
    const started = performance.now();
    const readiness = await checkReadiness({ database: hanging, embedder: createHashEmbedder(8) }, 50);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(readiness).toMatchObject({
      ready: false,
      checks: { database: { ok: false, reason: 'database: no answer within 50 ms' }, embedder: { ok: true } },
    });
  });

  it('sees an embedder whose workers are gone through the wrappers the app puts around it', async () => {
    const answering = { db: { execute: async () => [] }, driver: 'pglite', close: async () => {} } as unknown as Database;
    let alive = true;
    const pool = { ...createHashEmbedder(8), alive: () => alive };
    // As createAppContext wraps the configured embedder; the check once looked only one layer down.
    const embedder = rememberRecentVectors(coalescingEmbedder(instrumentEmbedder(pool)));
    expect(await checkReadiness({ database: answering, embedder })).toMatchObject({ ready: true });
    alive = false;
    expect(await checkReadiness({ database: answering, embedder })).toMatchObject({
      ready: false,
      checks: { embedder: { ok: false, reason: 'embedder: no embedding worker is alive' } },
    });
  });
});
