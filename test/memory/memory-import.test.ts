import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createMemoryImporter } from '../../src/memory/memory-import.js';
import { sql } from 'drizzle-orm';
import { exportedMemory } from '../../testkit/exported-memory.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { describeOnDrivers } from '../support/database-drivers.js';

const memory = (userId: string, i: number) => exportedMemory(userId, i, `${userId} keeps item ${i} in drawer ${i % 7}`);

/** Embedding the next batch while the current one is written: the same rows, each text embedded once. */
describeOnDrivers('memory import look-ahead', (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, createHashEmbedder(64));
  });
  afterAll(async () => {
    await database?.close();
  });

  const vectorsOf = (tenantId: string) =>
    queryRows<{ key: string; v: string }>(database.db, sql`SELECT key, embedding::text AS v FROM memories WHERE tenant_id = ${tenantId} ORDER BY key`);

  it('writes what a plain import writes, embedding each text once, and nothing on a second import', async () => {
    const batches = [0, 1, 2].map((b) => Array.from({ length: 10 }, (_, i) => memory('ada', b * 10 + i)));
    const plainEmbedder = createHashEmbedder(64);
    const plain = createMemoryImporter({ db: database.db, embedder: plainEmbedder, tenantId: 'plain' });
    for (const batch of batches) await plain.import(batch);

    const embedder = createHashEmbedder(64);
    const ahead = createMemoryImporter({ db: database.db, embedder, tenantId: 'ahead' });
    for (const [b, batch] of batches.entries()) {
      if (batches[b + 1]) ahead.embedAhead(batches[b + 1]!);
      expect((await ahead.import(batch)).imported).toBe(10);
    }
    expect(embedder.texts).toBe(30);
    expect(await vectorsOf('ahead')).toEqual(await vectorsOf('plain'));

    // Looked up first: keys the tenant holds are not embedded ahead either.
    const again = createMemoryImporter({ db: database.db, embedder, tenantId: 'ahead' });
    again.embedAhead(batches[1]!);
    expect((await again.import(batches[1]!)).skipped).toBe(10);
    expect(embedder.texts).toBe(30);
  });

  it('embeds in the batch what failed to embed ahead', async () => {
    const inner = createHashEmbedder(64);
    let fail = true;
    const flaky = { ...inner, embed: async (texts: string[]) => (fail ? Promise.reject(new Error('worker died')) : inner.embed(texts)) };
    const importer = createMemoryImporter({ db: database.db, embedder: flaky, tenantId: 'flaky' });
    const batch = Array.from({ length: 5 }, (_, i) => memory('bo', i));
    importer.embedAhead(batch);
    await new Promise((r) => setTimeout(r, 20));
    fail = false;
    expect((await importer.import(batch)).imported).toBe(5);
    expect(inner.texts).toBe(5);
  });
});
