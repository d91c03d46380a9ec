import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { PGVECTOR_HNSW_DEFAULTS, VECTOR_TABLES, ensureVectorSpace } from '../../src/db/vector-space.js';
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

      // Built before its parameters were set (a store from an earlier version): kept, not rebuilt at start.
      await database.db.execute(sql.raw(`DROP INDEX ${chunks.indexName}`));
      await database.db.execute(sql.raw(`CREATE INDEX ${chunks.indexName} ON chunks USING hnsw (embedding vector_cosine_ops)`));
      await ensureVectorSpace(database.db, createHashEmbedder(16));
      expect(await optionsOf(chunks.indexName)).toBeNull();
    });
  });
});
