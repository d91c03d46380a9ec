import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
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
});
