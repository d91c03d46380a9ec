import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database, Tx } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createPgAuditLog } from '../../src/audit/pg-audit-log.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createUserErasure } from '../../src/users/user-erasure.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { clusteredVectors, seededRandom, unit } from '../../testkit/vector-fixtures.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { signal } from '../support/signal.js';

type Counts = Record<string, number>;

/** The counts as migration 0009's triggers keep them (0025's shards summed), those that net to zero left out. */
async function kept(database: Database): Promise<Counts> {
  const rows = await queryRows<{ k: string; n: number }>(
    database.db,
    sql`SELECT table_name || '|' || tenant_id || '|' || scope || '|' || tag AS k, sum(rows)::int AS n FROM vector_filter_stats
          GROUP BY 1 HAVING sum(rows) <> 0`,
  );
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
}

/** The same counts computed from the rows themselves. */
async function recounted(database: Database): Promise<Counts> {
  const rows = await queryRows<{ k: string; n: number }>(
    database.db,
    sql`SELECT 'memories|' || m.tenant_id || '|' || sc.scope || '|' || t.tag AS k, count(*)::int AS n FROM memories m
          CROSS JOIN LATERAL (VALUES (m.agent_id), (m.agent_id || chr(31) || m.user_id)) AS sc(scope)
          CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(m.tags)) AS t(tag)
        GROUP BY 1
        UNION ALL
        SELECT 'chunks|' || c.tenant_id || '||' || t.tag, count(*)::int FROM chunks c
          CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(c.tags)) AS t(tag)
        GROUP BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
}

describeOnDrivers('vector filter stats', (driver) => {
  const DIMS = 8;
  // Any text gets a vector of its own, seeded by its characters.
  const embedder: Embedder = {
    id: 'test:seeded-8',
    dimensions: DIMS,
    maxInputTokens: 512,
    embed: async (texts) =>
      texts.map((t) => {
        const rand = seededRandom([...t].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7));
        return unit(Array.from({ length: DIMS }, () => rand() - 0.5));
      }),
    close: async () => {},
  };
  let database: Database;

  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, embedder);
  }, 120_000);
  afterAll(async () => {
    await database?.close();
  });
  beforeEach(async () => {
    await database.db.execute(sql`DELETE FROM memories`);
    await database.db.execute(sql`DELETE FROM documents`);
  });

  it('counts memories by tenant, agent, agent and user, and tag through saves, tag changes and deletes', async () => {
    const a = createPgMemoryStore({ db: database.db, embedder, tenantId: 'tenant-a' });
    const b = createPgMemoryStore({ db: database.db, embedder, tenantId: 'tenant-b' });
    await a.save({ key: 'k1', content: 'one', tags: ['red', 'blue'] });
    await a.save({ key: 'k2', content: 'two', tags: ['red'], agentId: 'other', userId: 'u1' });
    await a.saveMany([
      { key: 'k3', content: 'three', tags: ['blue'], userId: 'u1' },
      { key: 'k4', content: 'four', tags: [], userId: 'u2' },
    ]);
    await b.save({ key: 'k1', content: 'one', tags: ['red'] });
    expect(await kept(database)).toEqual(await recounted(database));
    expect((await kept(database))['memories|tenant-a|default|red']).toBe(1);
    expect((await kept(database))['memories|tenant-a|default|']).toBe(3);
    expect((await kept(database))['memories|tenant-a|default\u001fu1|blue']).toBe(1);

    // Tags changed in place, by a patch and by a save of the same content.
    await a.patch('k1', {}, { removeTags: ['blue'], addTags: ['green'] });
    await a.save({ key: 'k3', content: 'three', tags: ['red', 'blue'], userId: 'u1' });
    // Content changed (a new vector, the same row), and an update that moves nothing.
    await a.save({ key: 'k4', content: 'four, again', tags: ['blue'], userId: 'u2' });
    await database.db.execute(sql`UPDATE memories SET updated_at = now()`);
    expect(await kept(database)).toEqual(await recounted(database));

    await a.delete('k2', { agentId: 'other', userId: 'u1' });
    expect(await a.deleteByTags({ tagsAny: ['blue'] })).toBe(2);
    expect(await kept(database)).toEqual(await recounted(database));
    expect((await kept(database))['memories|tenant-b|default|red']).toBe(1);
    expect((await kept(database))['memories|tenant-a|default|']).toBe(1);
  });

  it('counts chunks by tenant and tag through inserts, updates and a cascading delete', async () => {
    const [doc] = await queryRows<{ id: string }>(
      database.db,
      sql`INSERT INTO documents (tenant_id, title, content_hash, format, text) VALUES ('t1', 'd', 'h', 'text', '') RETURNING id::text`,
    );
    const vector = `[${clusteredVectors(1, DIMS)[0]!.join(',')}]`;
    await database.db.execute(sql`INSERT INTO chunks (tenant_id, document_id, index, text, start, "end", token_count, passage_id, tags, embedding)
      SELECT 't1', ${doc!.id}::uuid, i, 'x', 0, 0, 1, gen_random_uuid(), CASE WHEN i % 3 = 0 THEN ARRAY['a', 'b'] ELSE ARRAY['a'] END, ${vector}::vector
      FROM generate_series(0, 29) AS i`);
    expect((await kept(database))['chunks|t1||a']).toBe(30);
    expect((await kept(database))['chunks|t1||b']).toBe(10);
    await database.db.execute(sql`UPDATE chunks SET tags = ARRAY['c'] WHERE index < 5`);
    expect(await kept(database)).toEqual(await recounted(database));
    await database.db.execute(sql`DELETE FROM documents WHERE id = ${doc!.id}::uuid`);
    expect(await kept(database)).toEqual({});
  });

  // One row a count made every writer of an agent wait, from its insert, for the one before to commit.
  it.skipIf(driver.name === 'PGlite')('lets two writers of one agent and tag insert side by side until they commit', async () => {
    const insert = (tx: Tx, key: string) =>
      tx.execute(sql`INSERT INTO memories (tenant_id, agent_id, user_id, key, content, tags) VALUES ('t', 'a', 'u', ${key}, ${key}, ARRAY['hot'])`);
    const shardOf = async (tx: Tx) => Number((await queryRows<{ s: number }>(tx, sql`SELECT vector_filter_stats_shard() AS s`))[0]!.s);
    const firstHolds = signal();
    const firstShard = signal<number>();
    const first = database.db.transaction(async (tx) => {
      await insert(tx, 'one');
      firstShard.resolve(await shardOf(tx));
      await firstHolds.promise;
    });
    const shard = await firstShard.promise;
    // The second writer's own transaction, on another shard (ids one apart in 16 share one).
    for (let attempt = 0; ; attempt++) {
      const outcome = await database.db
        .transaction(async (tx) => {
          if ((await shardOf(tx)) === shard) return 'same shard' as const;
          await tx.execute(sql`SET LOCAL lock_timeout = '5s'`);
          await insert(tx, 'two');
          return 'inserted' as const;
        })
        .catch((error: unknown) => error);
      if (outcome === 'inserted') break;
      if (outcome !== 'same shard' || attempt > 3) throw outcome;
    }
    firstHolds.resolve();
    await first;
    expect((await kept(database))['memories|t|a|hot']).toBe(2);
    expect(await kept(database)).toEqual(await recounted(database));
  });

  // Erasure deleted a count's shards when their sum read zero, even one a writer changed while the
  // delete waited for it: the count then fell below the rows it bounds, for good.
  it.skipIf(driver.name === 'PGlite')('keeps a shard a writer changed while erasure waited for it', async () => {
    const tenantId = 'erase-race';
    const scope = 'ag\u001fzed';
    await database.db.execute(sql`INSERT INTO vector_filter_stats (table_name, tenant_id, scope, tag, shard, rows)
      VALUES ('memories', ${tenantId}, ${scope}, 'x', 3, 1), ('memories', ${tenantId}, ${scope}, 'x', 7, -1)`);
    const held = signal();
    const holding = signal();
    const writer = database.db.transaction(async (tx) => {
      await tx.execute(sql`UPDATE vector_filter_stats SET rows = rows + 1 WHERE tenant_id = ${tenantId} AND shard = 3`);
      holding.resolve();
      await held.promise;
    });
    await holding.promise;
    const erasure = createUserErasure({ db: database.db, tenantId, audit: createPgAuditLog({ db: database.db, tenantId }) }).erase('zed', {
      actor: { type: 'open' },
    });
    // Released once the erasure's delete waits on the writer's row.
    for (let i = 0; i < 500; i++) {
      const [waiting] = await queryRows<{ n: number }>(database.db, sql`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`);
      if (Number(waiting!.n) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    held.resolve();
    await writer;
    await erasure;
    const left = await queryRows<{ shard: number; rows: number }>(
      database.db,
      sql`SELECT shard, rows::int AS rows FROM vector_filter_stats WHERE tenant_id = ${tenantId} ORDER BY shard`,
    );
    expect(left).toEqual([{ shard: 3, rows: 2 }]);
    await database.db.execute(sql`DELETE FROM vector_filter_stats WHERE tenant_id = ${tenantId}`);
  });

  it('is exact under a transaction that rolls back', async () => {
    const store = createPgMemoryStore({ db: database.db, embedder });
    await store.save({ key: 'k', content: 'kept', tags: ['t'] });
    await database.db
      .transaction(async (tx) => {
        await tx.execute(sql`UPDATE memories SET tags = ARRAY['u']`);
        throw new Error('rolled back');
      })
      .catch(() => {});
    expect(await kept(database)).toEqual(await recounted(database));
    expect((await kept(database))['memories|default|default|t']).toBe(1);
  });
});

describe('vector filter stats estimate', () => {
  it('is named after the filter scopes the memory corpus keeps', async () => {
    const { MEMORY_CORPUS } = await import('../../src/memory/memory-corpus.js');
    const { memoryFilter } = await import('../../src/memory/memory-corpus.js');
    const scopes = MEMORY_CORPUS.filterStats!.scopes;
    expect(scopes(memoryFilter('t', { agentId: 'a' }))).toEqual(['a']);
    expect(scopes(memoryFilter('t', { agentId: 'a', userId: 'u', includeShared: true }))).toEqual(['a\u001f', 'a\u001fu']);
    expect(scopes({ ...memoryFilter('t', {}), notEquals: { agentId: 'x' } })).toBeNull();
  });
});
