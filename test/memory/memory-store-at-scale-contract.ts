import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ident } from '../../src/db/sql-identifier.js';
import { memories } from '../../src/db/schema/index.js';
import { VECTOR_TABLES, ensureVectorSpace } from '../../src/db/vector-space.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { clusteredVectors, cosine, createTableEmbedder, seededRandom } from '../../testkit/vector-fixtures.js';
import type { DatabaseDriver } from '../support/database-drivers.js';

/**
 * 20k hand-made vectors with a 10% and a 0.2% tag: a filtered search must return `topK` rows
 * and the true nearest neighbours, through the exact path, the iterative index path, and both.
 */
export function filteredSearchAtScale(driver: DatabaseDriver) {
  describe('filtered vector search on 20k memories', () => {
    const N = 20_000;
    const DIMS = 32;
    const vectors = clusteredVectors(N, DIMS, 7);
    const rand = seededRandom(99);
    const queries = clusteredVectors(10, DIMS, 12345);
    const table = new Map(queries.map((q, i) => [`q${i}`, q]));
    const embedder = createTableEmbedder(DIMS, table);
    const tagsOf = (i: number) => [...(i % 10 === 3 ? ['common'] : []), ...(i % 500 === 17 ? ['rare'] : [])];
    let database: Database;

    beforeAll(async () => {
      database = await driver.open();
      await ensureVectorSpace(database.db, embedder);
      // pgvector builds an HNSW graph over 20k rows several times faster than it inserts them one by
      // one: the index the vector space made is dropped for the load and made again, as it was.
      const { indexName } = VECTOR_TABLES.find((t) => t.table === 'memories')!;
      const [index] = await queryRows<{ indexdef: string }>(database.db, sql`SELECT indexdef FROM pg_indexes WHERE indexname = ${indexName}`);
      expect(index).toBeDefined();
      await database.db.execute(sql`DROP INDEX ${ident(indexName)}`);
      for (let start = 0; start < N; start += 1000) {
        const rows = vectors.slice(start, start + 1000).map((embedding, j) => {
          const i = start + j;
          // The same split in metadata: a metadata filter must keep the tags' guarantee.
          const metadata = { project: tagsOf(i).includes('rare') ? 'rare-project' : 'other', priority: i % 5 };
          return { agentId: 'scale', key: `m${i}`, content: `memory ${i} ${rand()}`, tags: tagsOf(i), metadata, embedding };
        });
        await database.db.insert(memories).values(rows);
      }
      await database.db.execute(sql.raw(index!.indexdef));
      await database.db.execute(sql`ANALYZE memories`);
    }, 600_000);
    afterAll(async () => {
      await database?.close();
    });

    const truth = (query: number[], tag: string, k: number) =>
      vectors
        .map((v, i) => ({ i, s: cosine(v, query) }))
        .filter(({ i }) => tagsOf(i).includes(tag))
        .sort((a, b) => b.s - a.s)
        .slice(0, k)
        .map(({ i }) => `m${i}`);

    const recall = (got: string[], want: string[]) => got.filter((k) => want.includes(k)).length / want.length;

    for (const [path, scan] of [
      ['default thresholds', {}],
      ['index only (no exact scan for few matches)', { exactScanMaxRows: 0, walkCost: 0 }],
      ['exact scan for every filter', { exactScanMaxRows: 1_000_000 }],
    ] as const) {
      it(`returns topK rows for the 0.2% and the 10% tag: ${path}`, async () => {
        const store = createPgMemoryStore({ db: database.db, embedder, ...scan });
        let rareRecall = 0;
        let commonRecall = 0;
        for (let q = 0; q < queries.length; q++) {
          const rare = await store.search(`q${q}`, { agentId: 'scale', tagsAny: ['rare'], topK: 10, mode: 'vector' });
          expect(rare).toHaveLength(10);
          expect(rare.every((h) => h.memory.tags.includes('rare'))).toBe(true);
          rareRecall += recall(
            rare.map((h) => h.memory.key),
            truth(queries[q]!, 'rare', 10),
          );
          // The 0.2% again, by metadata: equality and a range, inside the query before the LIMIT.
          const byMetadata = await store.search(`q${q}`, {
            agentId: 'scale',
            metadata: {
              and: [
                { key: 'project', op: 'eq', value: 'rare-project' },
                { key: 'priority', op: 'gte', value: 0 },
              ],
            },
            topK: 10,
            mode: 'vector',
          });
          expect(byMetadata.map((h) => h.memory.key).sort()).toEqual(rare.map((h) => h.memory.key).sort());
          const common = await store.search(`q${q}`, { agentId: 'scale', tagsAll: ['common'], topK: 10, mode: 'vector' });
          expect(common).toHaveLength(10);
          expect(common.every((h) => h.memory.tags.includes('common'))).toBe(true);
          commonRecall += recall(
            common.map((h) => h.memory.key),
            truth(queries[q]!, 'common', 10),
          );
        }
        expect(rareRecall / queries.length).toBeGreaterThanOrEqual(0.9);
        expect(commonRecall / queries.length).toBeGreaterThanOrEqual(0.9);
      });
    }

    it('returns every match when fewer than topK rows match', async () => {
      const store = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 0, walkCost: 0 });
      const hits = await store.search('q0', { agentId: 'scale', tagsAll: ['rare', 'common'], topK: 100, mode: 'vector' });
      const expected = Array.from({ length: N }, (_, i) => i).filter((i) => tagsOf(i).includes('rare') && tagsOf(i).includes('common'));
      expect(hits.map((h) => h.memory.key).sort()).toEqual(expected.map((i) => `m${i}`).sort());
    });
  });
}
