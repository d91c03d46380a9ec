import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { DEFAULT_EF_SEARCH } from '../../src/db/filtered-vector-search.js';
import { PGVECTOR_HNSW_DEFAULTS, VECTOR_TABLES, ensureVectorSpace } from '../../src/db/vector-space.js';
import { TURN_CORPUS } from '../../src/conversations/turn-corpus.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { describeOnDrivers } from '../support/database-drivers.js';

describeOnDrivers('vector space', (driver) => {
  describe('HNSW index parameters', () => {
    let database: Database;

    beforeAll(async () => {
      database = await driver.open();
    });
    afterAll(() => database?.close());

    const optionsOf = async (index: string) => {
      const [row] = await queryRows<{ options: string[] | null }>(database!.db, sql`SELECT reloptions AS options FROM pg_class WHERE relname = ${index}`);
      return row?.options;
    };

    it("builds each table's index with its own m and ef_construction, and leaves an existing index as it was built", async () => {
      await ensureVectorSpace(database.db, createHashEmbedder(16));
      for (const t of VECTOR_TABLES) {
        const { m, efConstruction } = t.hnsw ?? PGVECTOR_HNSW_DEFAULTS;
        expect(await optionsOf(t.indexName)).toEqual([`m=${m}`, `ef_construction=${efConstruction}`]);
      }
      const chunks = VECTOR_TABLES.find((t) => t.table === 'chunks')!;
      expect(chunks.hnsw).toBeDefined();
      expect(chunks.hnsw).not.toEqual(PGVECTOR_HNSW_DEFAULTS);
      // Written after every reply and by the thousand on import: sparse, searched wider (hnsw-params.md).
      expect(VECTOR_TABLES.find((t) => t.table === 'turns')!.hnsw?.m).toBeLessThan(PGVECTOR_HNSW_DEFAULTS.m);
      expect(TURN_CORPUS.efSearch).toBeGreaterThan(DEFAULT_EF_SEARCH);

      // Built before its parameters were set (a store from an earlier version): kept, not rebuilt at start.
      await database.db.execute(sql.raw(`DROP INDEX ${chunks.indexName}`));
      await database.db.execute(sql.raw(`CREATE INDEX ${chunks.indexName} ON chunks USING hnsw (embedding vector_cosine_ops)`));
      await ensureVectorSpace(database.db, createHashEmbedder(16));
      expect(await optionsOf(chunks.indexName)).toBeNull();
    });
  });

  describe('vectors stored in the row', () => {
    let database: Database;
    const embedder = createHashEmbedder(512);

    beforeAll(async () => {
      database = await driver.open();
      await ensureVectorSpace(database.db, embedder);
    });
    afterAll(() => database?.close());

    const toastBytes = async (table: string) => {
      const [row] = await queryRows<{ bytes: number }>(
        database.db,
        sql`SELECT coalesce(pg_total_relation_size(nullif(reltoastrelid, 0)), 0)::int AS bytes FROM pg_class WHERE relname = ${table}`,
      );
      return Number(row?.bytes);
    };

    it('keeps 512-d memory vectors and their text out of the TOAST table, and moves a text too large for a page', async () => {
      const store = createPgMemoryStore({ db: database.db, embedder, tenantId: 'inline' });
      const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => ((i + 1) * 7919 * (seed + 3)).toString(36)).join(' ');
      const before = await toastBytes('memories');
      for (let i = 0; i < 20; i++) await store.save({ key: `note-${i}`, content: `The user keeps notes: ${words(40, i)}` });
      expect(await toastBytes('memories')).toBe(before);

      await store.save({ key: 'long', content: words(3_000, 99) });
      expect(await toastBytes('memories')).toBeGreaterThan(before);
      expect((await store.get('long'))?.content).toBe(words(3_000, 99));
    });
  });
});
