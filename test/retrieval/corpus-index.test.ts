import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Database, Tx } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { MEMORY_CORPUS } from '../../src/memory/memory-corpus.js';
import { defaultAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { MAX_DEFERRED_WRITES } from '../../src/retrieval/bm25/bm25-changes.js';
import { MAX_DEFERRED_POSTINGS } from '../../src/retrieval/bm25/bm25-postings-write.js';
import { type CorpusIndex, MAX_TENANT_WRITERS, createCorpusIndex } from '../../src/retrieval/corpus-index.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { signal } from '../support/signal.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeOnDrivers('CorpusIndex.write', (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(() => database?.close());

  /** A memory row of its own, indexed by `index` in `tx`: its postings, frequencies and totals. */
  async function indexRow(index: CorpusIndex, tx: Tx, tenantId: string, text: string) {
    const indexed = index.termsOf(text);
    const [row] = await queryRows<{ id: string }>(
      tx,
      sql`INSERT INTO memories (tenant_id, agent_id, key, content, bm25_length)
        VALUES (${tenantId}, 'default', ${randomUUID()}, ${text}, ${indexed.length}) RETURNING id::text AS id`,
    );
    await index.add(tx, tenantId, [{ id: row!.id, ...indexed }]);
  }
  /** Where the tenant's document frequencies and total length differ from a recount of its postings. */
  async function drift(tenantId: string) {
    return queryRows(
      database.db,
      sql`SELECT coalesce(s.term, p.term) AS term, s.df AS stored, p.df AS counted
        FROM (SELECT term, df FROM memory_term_stats WHERE tenant_id = ${tenantId}) s
        FULL JOIN (SELECT term, count(*)::int AS df FROM memory_postings WHERE tenant_id = ${tenantId} GROUP BY term) p ON p.term = s.term
        WHERE s.df IS DISTINCT FROM p.df
      UNION ALL
      SELECT 'totals', s.total::int, p.n FROM memory_corpus_stats s,
        (SELECT count(DISTINCT memory_id)::int AS n, coalesce(sum(tf), 0)::int AS len FROM memory_postings WHERE tenant_id = ${tenantId}) p
      WHERE s.tenant_id = ${tenantId} AND (s.total <> p.n OR s.total_length <> p.len)`,
    );
  }

  it('indexes a row with no word the analyzer keeps, holding the corpus alone: a document of one CJK character failed to ingest', async () => {
    const tenantId = 'tenant-no-terms';
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    await database.db.transaction(async (tx) => {
      await index.lock(tx, tenantId, true);
      await indexRow(index, tx, tenantId, '𳑺');
    });
    const [stats] = await queryRows<{ total: number }>(database.db, sql`SELECT total::int AS total FROM memory_corpus_stats WHERE tenant_id = ${tenantId}`);
    expect(stats).toEqual({ total: 1 });
  });

  it('indexes a row with no word the analyzer keeps inside a writer: a memory of punctuation alone failed to save', async () => {
    const tenantId = 'tenant-no-terms-writer';
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    await index.write(database.db, tenantId, true, async (tx) => {
      await indexRow(index, tx, tenantId, "\\'; --");
      await indexRow(index, tx, tenantId, 'x'.repeat(100_000));
    });
    const [stats] = await queryRows<{ total: number }>(database.db, sql`SELECT total::int AS total FROM memory_corpus_stats WHERE tenant_id = ${tenantId}`);
    expect(stats).toEqual({ total: 2 });
  });

  it('saves of one tenant wait for each other: two of its writers of postings hold the write section at once', async () => {
    const tenantId = 'tenant-overlap';
    const [a, b] = [createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer), createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer)];
    await a.write(database.db, tenantId, true, (tx) => indexRow(a, tx, tenantId, 'the first words of the tenant'));
    const log: string[] = [];
    let sharing = -1;
    // Each writer waits, inside its transaction, until the other has started its own.
    const started = [signal(), signal()];
    // The second holds its transaction open until the first has counted the locks: it could commit first otherwise.
    const counted = signal();
    const overlapping = driver.name === 'PostgreSQL server';
    const writer = (index: CorpusIndex, me: number) =>
      index.write(database.db, tenantId, true, async (tx) => {
        log.push(`${me} starts`);
        started[me]!.resolve();
        // On PGlite one connection runs one transaction at a time: nothing to wait for.
        if (overlapping) await Promise.race([started[1 - me]!.promise, sleep(10_000)]);
        if (overlapping && me === 0) {
          const [row] = await queryRows<{ n: number }>(
            database.db,
            sql`SELECT count(*)::int AS n FROM pg_locks
              WHERE locktype = 'advisory' AND mode = 'ShareLock' AND granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          );
          sharing = row!.n;
          counted.resolve();
        }
        if (overlapping && me === 1) await Promise.race([counted.promise, sleep(10_000)]);
        await indexRow(index, tx, tenantId, `shared words of writer ${me} and the tenant`);
        log.push(`${me} ends`);
      });
    await Promise.all([writer(a, 0), writer(b, 1)]);
    if (overlapping) {
      expect(log.slice(0, 2).sort()).toEqual(['0 starts', '1 starts']);
      expect(sharing).toBe(2);
    }
    expect(await drift(tenantId)).toEqual([]);
  });

  it("runs a tenant's writers holding the corpus alone one at a time in the process: the others hold no connection and no lock wait", async () => {
    const gate = signal();
    const log: string[] = [];
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    const writers = Array.from({ length: MAX_TENANT_WRITERS + 2 }, (_, i) =>
      index.write(database.db, 'tenant-bound', false, async () => {
        log.push(`start ${i}`);
        await gate.promise;
      }),
    );
    await sleep(100);
    // Writers without postings hold the corpus alone: one runs, the others wait in the process.
    expect(log.length).toBe(1);
    const other = index.write(database.db, 'tenant-other', true, async () => 'other tenant');
    if (driver.name === 'PostgreSQL server') {
      expect(await other).toBe('other tenant');
      const [row] = await queryRows<{ n: number }>(
        database.db,
        sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      expect(row!.n).toBe(0);
    }
    gate.resolve();
    await Promise.all([...writers, other]);
    expect(log).toHaveLength(MAX_TENANT_WRITERS + 2);
  });

  /** The tenant's memories with `content`, counted outside any writer's transaction. */
  async function countOf(tenantId: string, content: string) {
    const [row] = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM memories WHERE tenant_id = ${tenantId} AND content = ${content}`,
    );
    return row!.n;
  }
  const markerInsert = (tenantId: string, content: string) =>
    sql`INSERT INTO memories (tenant_id, agent_id, key, content) VALUES (${tenantId}, 'default', ${randomUUID()}, ${content})`;

  it('holds postings and deferred writes back for the last statement: every one lands, more than a statement holds included', async () => {
    const tenantId = 'tenant-deferred';
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    await index.write(database.db, tenantId, true, (tx) => indexRow(index, tx, tenantId, 'the first words of the tenant'));
    await index.write(database.db, tenantId, true, async (tx) => {
      for (let i = 0; i < MAX_DEFERRED_WRITES + 3; i++) {
        await indexRow(index, tx, tenantId, `deferred row number ${i} with words`);
        await index.deferWrite(tx, markerInsert(tenantId, 'a deferred marker'));
      }
    });
    expect(await countOf(tenantId, 'a deferred marker')).toBe(MAX_DEFERRED_WRITES + 3);
    const [postings] = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(DISTINCT memory_id)::int AS n FROM memory_postings WHERE tenant_id = ${tenantId}`,
    );
    expect(postings!.n).toBe(MAX_DEFERRED_WRITES + 4);
    expect(await drift(tenantId)).toEqual([]);
  });

  it("writes many postings at once, not after the last statement locks the term rows: two imports' inserts ran in turn", async () => {
    const tenantId = 'tenant-many-postings';
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    await index.write(database.db, tenantId, true, (tx) => indexRow(index, tx, tenantId, 'the first words of the tenant'));
    // Words the analyzer keeps as they are: one posting each.
    const words = (n: number, stem: string) => Array.from({ length: n }, (_, i) => `${stem}${i.toString(36)}x`).join(' ');
    const postingsSeen = (tx: Tx, term: string) =>
      queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM memory_postings WHERE tenant_id = ${tenantId} AND term = ${term}`);
    const seen = await index.write(database.db, tenantId, true, async (tx) => {
      await indexRow(index, tx, tenantId, words(MAX_DEFERRED_POSTINGS + 1, 'many'));
      await indexRow(index, tx, tenantId, words(3, 'few'));
      const [many] = await postingsSeen(tx, 'many0x');
      const [few] = await postingsSeen(tx, 'few0x');
      return { many: many!.n, few: few!.n };
    });
    // A row of a few terms is still held back for the last statement.
    expect(seen).toEqual({ many: 1, few: 0 });
    expect(await drift(tenantId)).toEqual([]);
  });

  it("deletes a row's postings with the row whatever deletes it: the postings' foreign key, which cascaded, is gone", async () => {
    const tenantId = 'tenant-row-deleted';
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    await index.write(database.db, tenantId, true, async (tx) => {
      await indexRow(index, tx, tenantId, 'a row deleted by hand');
      await indexRow(index, tx, tenantId, 'a row kept with its words');
    });
    const postingsOf = async (content: string) => {
      const [row] = await queryRows<{ n: number }>(
        database.db,
        sql`SELECT count(*)::int AS n FROM memory_postings p JOIN memories m ON m.id = p.memory_id
          WHERE m.tenant_id = ${tenantId} AND m.content = ${content}`,
      );
      return row!.n;
    };
    const [{ n: before } = { n: 0 }] = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM memory_postings WHERE tenant_id = ${tenantId}`,
    );
    const kept = await postingsOf('a row kept with its words');
    expect(kept).toBeGreaterThan(0);
    await database.db.execute(sql`DELETE FROM memories WHERE tenant_id = ${tenantId} AND content = 'a row deleted by hand'`);
    const [{ n: after } = { n: 0 }] = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM memory_postings WHERE tenant_id = ${tenantId}`,
    );
    expect(before - after).toBe(index.termsOf('a row deleted by hand').termFrequencies.size);
    expect(after).toBe(kept);
  });

  it('removes postings it held back: a row indexed and unindexed in one transaction leaves no posting behind', async () => {
    const tenantId = 'tenant-deferred-removed';
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    await index.write(database.db, tenantId, true, (tx) => indexRow(index, tx, tenantId, 'the first words of the tenant'));
    await index.write(database.db, tenantId, true, async (tx) => {
      await indexRow(index, tx, tenantId, 'a short lived row of words');
      await index.deleteRows(tx, tenantId, sql`tenant_id = ${tenantId} AND content = 'a short lived row of words'`);
    });
    const [gone] = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM memory_postings WHERE tenant_id = ${tenantId} AND term = 'short'`,
    );
    expect(gone!.n).toBe(0);
    expect(await drift(tenantId)).toEqual([]);
  });

  it('runs no deferred write of a transaction that rolls back, and runs one at once outside a writer', async () => {
    const tenantId = 'tenant-deferred-rollback';
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    await index.write(database.db, tenantId, true, (tx) => indexRow(index, tx, tenantId, 'the first words of the tenant'));
    const failed = index.write(database.db, tenantId, true, async (tx) => {
      await indexRow(index, tx, tenantId, 'a row that never lands');
      await index.deferWrite(tx, markerInsert(tenantId, 'a rolled back marker'));
      throw new Error('work failed');
    });
    await expect(failed).rejects.toThrow('work failed');
    expect(await countOf(tenantId, 'a rolled back marker')).toBe(0);
    expect(await drift(tenantId)).toEqual([]);
    await database.db.transaction(async (tx) => {
      await index.deferWrite(tx, markerInsert(tenantId, 'an immediate marker'));
      const [seen] = await queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM memories WHERE content = 'an immediate marker'`);
      expect(seen!.n).toBe(1);
    });
  });

  it("gives a failed write's error to its caller and runs the next", async () => {
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    const failed = index.write(database.db, 'tenant-c', true, async () => {
      throw new Error('write failed');
    });
    const next = index.write(database.db, 'tenant-c', true, async () => 'written');
    await expect(failed).rejects.toThrow('write failed');
    expect(await next).toBe('written');
  });

  it('shares the corpus from the first statement of a writer that asks it to, once, before that statement reads a row', async () => {
    const tenantId = 'tenant-first-lock';
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    await index.write(database.db, tenantId, true, (tx) => indexRow(index, tx, tenantId, 'the first words of the tenant'));
    const shares = async (tx: Tx) => {
      const [row] = await queryRows<{ n: number }>(
        tx,
        sql`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ShareLock' AND granted AND pid = pg_backend_pid()`,
      );
      return row!.n;
    };
    const seen = await index.write(
      database.db,
      tenantId,
      true,
      async (tx) => {
        const before = await shares(tx);
        const first = index.firstLock(tx);
        expect(first).toBeDefined();
        await tx.execute(sql`SELECT 1 WHERE ${first!}`);
        const after = await shares(tx);
        expect(index.firstLock(tx)).toBeUndefined();
        await indexRow(index, tx, tenantId, 'words written after the first statement');
        return { before, after };
      },
      { sharedByFirstStatement: true },
    );
    expect(seen).toEqual({ before: 0, after: 1 });
    // A writer that did not ask takes the corpus itself: nothing is left for its statements to take.
    await index.write(database.db, tenantId, true, async (tx) => {
      expect(index.firstLock(tx)).toBeUndefined();
      expect(await shares(tx)).toBe(1);
    });
    expect(await drift(tenantId)).toEqual([]);
  });

  it('refuses index work of a writer whose first statement has not yet taken the corpus, and keeps none of it', async () => {
    const tenantId = 'tenant-first-lock-missed';
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    await index.write(database.db, tenantId, true, (tx) => indexRow(index, tx, tenantId, 'the first words of the tenant'));
    const early = index.write(database.db, tenantId, true, (tx) => indexRow(index, tx, tenantId, 'words before any lock'), { sharedByFirstStatement: true });
    await expect(early).rejects.toThrow(/before its first statement took the corpus/);
    expect(await countOf(tenantId, 'words before any lock')).toBe(0);
    expect(await drift(tenantId)).toEqual([]);
  });
});
