import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createMemoryChanges } from '../../src/memory/memory-changes.js';
import { createMemoryImporter } from '../../src/memory/memory-import.js';
import { createMemoryStoreContext } from '../../src/memory/memory-store-context.js';
import { type WriteMemory, createMemoryWrite } from '../../src/memory/memory-write.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { defaultAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { exportedMemory } from '../../testkit/exported-memory.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { signal } from '../support/signal.js';
import { spyOnTransactions } from '../support/transaction-spy.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const WORDS = ['harbor', 'lantern', 'copper', 'meadow', 'violet', 'granite', 'orchard', 'falcon', 'ember', 'tidal', 'quartz', 'willow'];
/** Text sharing most of its words with every other: the writers meet on the same term rows. */
const wording = (i: number, variant = 0) =>
  `${WORDS[i % WORDS.length]} ${WORDS[(i + variant) % WORDS.length]} shared common words ${WORDS[(i * 7 + variant) % WORDS.length]} note ${i}`;

/**
 * One tenant's memory writers at once, as concurrent requests run them: whatever order their
 * transactions interleave in, BM25's statistics equal a recount once they commit, and a key is
 * written once.
 */
describeOnDrivers('memory writes of one tenant at once', (driver) => {
  let database: Database;
  const embedder = createHashEmbedder(64);
  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, embedder);
  });
  afterAll(async () => {
    await database?.close();
  });
  // A store per request, as the API makes them: they share nothing in the process but the database.
  const store = (tenantId: string) => createPgMemoryStore({ db: database.db, embedder, tenantId });
  const db = () => database.db;

  /** Where the tenant's statistics differ from a recount of its postings and rows; all empty when exact. */
  async function drift(tenantId: string) {
    const terms = await queryRows(
      db(),
      sql`SELECT coalesce(s.term, p.term) AS term, s.df AS stored, p.df AS counted
        FROM (SELECT term, df FROM memory_term_stats WHERE tenant_id = ${tenantId}) s
        FULL JOIN (SELECT term, count(*)::int AS df FROM memory_postings WHERE tenant_id = ${tenantId} GROUP BY term) p ON p.term = s.term
        WHERE s.df IS DISTINCT FROM p.df`,
    );
    const totals = await queryRows(
      db(),
      sql`SELECT s.total::int AS stored, r.n AS counted, s.total_length::int AS stored_length, r.len AS counted_length, s.analyzer_id
        FROM memory_corpus_stats s,
          (SELECT count(bm25_length)::int AS n, coalesce(sum(bm25_length), 0)::int AS len FROM memories WHERE tenant_id = ${tenantId}) r
        WHERE s.tenant_id = ${tenantId} AND (s.total <> r.n OR s.total_length <> r.len OR s.analyzer_id <> ${defaultAnalyzer.id})`,
    );
    const lengths = await queryRows(
      db(),
      sql`SELECT m.key FROM memories m LEFT JOIN memory_postings p ON p.memory_id = m.id
        WHERE m.tenant_id = ${tenantId} GROUP BY m.id, m.key, m.bm25_length HAVING coalesce(sum(p.tf), 0) <> coalesce(m.bm25_length, 0)`,
    );
    const [corpus] = await queryRows<{ n: number }>(db(), sql`SELECT count(*)::int AS n FROM memory_corpus_stats WHERE tenant_id = ${tenantId}`);
    return { terms, totals, lengths, corpusRows: corpus!.n };
  }
  const exact = { terms: [], totals: [], lengths: [], corpusRows: 1 };

  // A save held its place in the tenant's writer lane for seven round trips, each a queue under load.
  it.skipIf(driver.name === 'PGlite')(
    'a save of a new key holds its lane for five statements: BEGIN, its locks, its insert, its last BM25 statement, COMMIT',
    async () => {
      await store('round-trips').save({ key: 'first', content: wording(0) });
      const spy = spyOnTransactions(db());
      const saved = await createPgMemoryStore({ db: spy.db, embedder, tenantId: 'round-trips' }).save({ key: 'second', content: wording(1) });
      expect(saved.created).toBe(true);
      const [statements, ...others] = spy.relayed();
      expect(others).toEqual([]);
      expect(statements).toHaveLength(5);
      expect(statements![0]).toMatch(/^begin$/i);
      // The corpus share, the key's lock and the row, in one statement.
      expect(statements![1]).toMatch(/pg_advisory_xact_lock_shared\(/);
      expect(statements![1]).toMatch(/pg_advisory_xact_lock\(h\)/);
      expect(statements![1]).toMatch(/for update$/i);
      expect(statements![2]).toMatch(/^insert into "memories"/i);
      expect(statements![4]).toMatch(/^commit$/i);
      expect(await drift('round-trips')).toEqual(exact);
    },
  );

  it("a tenant's first saves, all at once: one corpus row, statistics equal to a recount", async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store('first').save({ key: `k${i}`, content: wording(i) })));
    expect(results.every((r) => r.created)).toBe(true);
    expect(await drift('first')).toEqual(exact);
  });

  it('concurrent saves of different keys sharing words: document frequencies, row count and total length equal a recount', async () => {
    await store('many').save({ key: 'seed', content: wording(0) });
    await Promise.all(Array.from({ length: 32 }, (_, i) => store('many').save({ key: `k${i}`, content: wording(i) })));
    const [count] = await queryRows<{ n: number }>(db(), sql`SELECT count(*)::int AS n FROM memories WHERE tenant_id = 'many'`);
    expect(count!.n).toBe(33);
    expect(await drift('many')).toEqual(exact);
  });

  it('concurrent rewordings, batches over the same keys in opposite orders and deletions: still equal to a recount', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    await store('mixed').saveMany(keys.map((key, i) => ({ key, content: wording(i) })));
    // Rewordings take terms out and put others in, so writers lock term rows in both directions.
    const writes: Promise<unknown>[] = [];
    for (let round = 1; round <= 3; round++) {
      for (const [i, key] of keys.entries()) writes.push(store('mixed').save({ key, content: wording(i, round) }));
      const batch = keys.slice(0, 6).map((key, i) => ({ key, content: wording(i + 3, round + 5) }));
      writes.push(store('mixed').saveMany(batch), store('mixed').saveMany([...batch].reverse()));
      writes.push(store('mixed').patch(`k${round + 6}`, {}, { content: wording(round, 9) }));
      writes.push(store('mixed').delete(`k${11 - round}`));
    }
    await Promise.all(writes);
    const rows = await queryRows<{ key: string }>(db(), sql`SELECT key FROM memories WHERE tenant_id = 'mixed'`);
    expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length);
    expect(await drift('mixed')).toEqual(exact);
  });

  it('concurrent saves of the same new key: one row, holding one of the contents, with their history in order', async () => {
    const contents = Array.from({ length: 6 }, (_, i) => wording(i));
    const results = await Promise.all(contents.map((content) => store('same-key').save({ key: 'one', content })));
    const rows = await queryRows<{ content: string }>(db(), sql`SELECT content FROM memories WHERE tenant_id = 'same-key'`);
    expect(rows).toHaveLength(1);
    expect(contents).toContain(rows[0]!.content);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const events = await queryRows<{ event: string }>(db(), sql`SELECT event FROM memory_history WHERE tenant_id = 'same-key' ORDER BY id`);
    expect(events.map((e) => e.event)).toEqual(['created', ...Array(5).fill('updated')]);
    expect(await drift('same-key')).toEqual(exact);
  });

  it('two concurrent extractions of the same fact store it once', async () => {
    const tenantId = 'same-fact';
    const scope = { agentId: 'assistant', userId: 'ada' };
    // A tenant's first postings are written holding the corpus alone, which would serialise the two.
    await store(tenantId).save({ key: 'seed', content: wording(0) });
    // The first writer to pass its content check holds its transaction open until the other has
    // either passed its own check too (and reached its write) or is waiting on a lock: it would
    // commit before the other read otherwise. On PGlite one transaction runs at a time: no gate.
    const overlapping = driver.name === 'PostgreSQL server';
    const secondWrites = signal();
    let writers = 0;
    let gateOpen = false;
    async function otherWaitsOnLock() {
      for (let i = 0; i < 500 && !gateOpen; i++) {
        const [row] = await queryRows<{ n: number }>(
          db(),
          sql`SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'advisory' AND NOT granted
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        if (row!.n > 0) return;
        await sleep(20);
      }
    }
    const extraction = () => {
      const ctx = createMemoryStoreContext({ db: db(), embedder, tenantId });
      const write = createMemoryWrite(ctx);
      const gated: WriteMemory = async (...args) => {
        writers += 1;
        if (overlapping && writers === 1) await Promise.race([secondWrites.promise, otherWaitsOnLock(), sleep(10_000)]);
        else secondWrites.resolve();
        gateOpen = true;
        return write(...args);
      };
      return createMemoryChanges(ctx, gated);
    };
    // Two wordings the dedupe takes for one fact: the lock must compare them as it does.
    const results = await Promise.all(
      ['Likes green tea', '  likes  GREEN tea. '].map((content) =>
        extraction().applyChanges(scope, [{ op: 'add', content }], { type: 'extraction', conversationId: randomUUID(), turn: 1 }),
      ),
    );
    const rows = await queryRows<{ key: string }>(db(), sql`SELECT key FROM memories WHERE tenant_id = ${tenantId} AND key <> 'seed'`);
    expect(rows).toHaveLength(1);
    expect(results.map(([r]) => r!.status).sort()).toEqual(['applied', 'skipped']);
    expect(await drift(tenantId)).toEqual(exact);
  });

  it('imports of the same records at once: each key imported once', async () => {
    const records = Array.from({ length: 10 }, (_, i) => exportedMemory('ada', i, wording(i)));
    const importer = () => createMemoryImporter({ db: db(), embedder, tenantId: 'imports' });
    await store('imports').save({ key: 'seed', content: wording(1) });
    const results = await Promise.all([1, 2, 3].map(() => importer().import(records)));
    expect(results.reduce((n, r) => n + r.imported, 0)).toBe(10);
    const [count] = await queryRows<{ n: number }>(db(), sql`SELECT count(*)::int AS n FROM memories WHERE tenant_id = 'imports'`);
    expect(count!.n).toBe(11);
    expect(await drift('imports')).toEqual(exact);
  });
});
