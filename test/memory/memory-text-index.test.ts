import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app-context.js';
import { waitForBackfill } from '../support/wait-for-backfill.js';
import { loadConfig } from '../../src/config/config.js';
import type { Db } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { VECTOR_TABLES, ensureVectorSpace } from '../../src/db/vector-space.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type DatabaseDriver, describeOnDrivers } from '../support/database-drivers.js';

const LEGACY = [
  { key: 'ingrid', content: 'Ingrid Halvorsen runs the glacier tours' },
  { key: 'parking', content: 'Parking spot 7G-118 at the depot' },
  { key: 'tea', content: 'Alice prefers green tea' },
];

/** The migrations folder as it was before the memory BM25 index (0000 and 0001 only). */
function migrationsBeforeMemoryPostings(): string {
  const source = resolve('migrations');
  const folder = mkdtempSync(join(tmpdir(), 'memrag-migrations-'));
  mkdirSync(join(folder, 'meta'));
  const journal = JSON.parse(readFileSync(join(source, 'meta', '_journal.json'), 'utf8')) as { entries: { idx: number; tag: string }[] };
  journal.entries = journal.entries.filter((e) => e.idx < 2);
  writeFileSync(join(folder, 'meta', '_journal.json'), JSON.stringify(journal));
  for (const { tag } of journal.entries) copyFileSync(join(source, `${tag}.sql`), join(folder, `${tag}.sql`));
  return folder;
}

/** Memories written by the previous release: the schema of 0001, saved without any postings. */
async function seedLegacy(db: Db): Promise<void> {
  const embedder = createHashEmbedder(64);
  // The vector tables of that release: turns came later.
  await ensureVectorSpace(
    db,
    embedder,
    VECTOR_TABLES.filter((t) => t.table === 'memories' || t.table === 'chunks'),
  );
  const vectors = await embedder.embed(LEGACY.map((m) => m.content));
  for (const [i, m] of LEGACY.entries()) {
    await db.execute(sql`INSERT INTO memories (agent_id, key, content, embedding)
      VALUES ('default', ${m.key}, ${m.content}, ${`[${vectors[i]!.join(',')}]`}::vector)`);
  }
}

function upgradeSuite(driver: DatabaseDriver) {
  describe('upgrading a store with memories to the BM25 index', () => {
    it('migrates, then indexes the existing memories in the start-up backfill job', async () => {
      const migrationsFolder = migrationsBeforeMemoryPostings();
      const prepared = await driver
        .provision({ olderRelease: { migrationsFolder, seed: seedLegacy } })
        .finally(() => rmSync(migrationsFolder, { recursive: true, force: true }));
      try {
        const ctx = await createAppContext(loadConfig({ LOG_LEVEL: 'silent', ...prepared.env }), { embedder: createHashEmbedder(64) });
        try {
          await waitForBackfill(ctx.database.db);
          const hits = await ctx.memories.forTenant('default').search('Halvorsen', { mode: 'text' });
          expect(hits.map((h) => [h.memory.key, h.ranks])).toEqual([['ingrid', { vector: null, text: 1 }]]);
          expect((await ctx.memories.forTenant('default').search('7G-118 parking')).map((h) => h.memory.key)[0]).toBe('parking');
          const [stats] = await queryRows<{ total: string; total_length: string }>(ctx.database.db, sql`SELECT total, total_length FROM memory_corpus_stats`);
          const [lengths] = await queryRows<{ n: number; unindexed: number; len: string }>(
            ctx.database.db,
            sql`SELECT count(*)::int AS n, count(*) FILTER (WHERE bm25_length IS NULL)::int AS unindexed, sum(bm25_length) AS len FROM memories`,
          );
          expect(lengths).toMatchObject({ n: 3, unindexed: 0 });
          expect([Number(stats!.total), Number(stats!.total_length)]).toEqual([3, Number(lengths!.len)]);
          // The memories themselves are as they were: not re-saved, not re-embedded.
          expect((await ctx.memories.forTenant('default').get('tea'))?.updatedAt).toEqual((await ctx.memories.forTenant('default').get('tea'))?.createdAt);
        } finally {
          await ctx.close();
        }
      } finally {
        await prepared.release();
      }
    });
  });
}

describeOnDrivers('memory text index', upgradeSuite);
