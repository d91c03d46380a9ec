import { randomUUID } from 'node:crypto';
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
import { defaultAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { InMemoryBm25Index } from '../../src/retrieval/bm25/bm25.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type DatabaseDriver, describeOnDrivers } from '../support/database-drivers.js';

const MEMORIES = [
  { key: 'ingrid', content: 'Ingrid Halvorsen runs the glacier tours' },
  { key: 'parking', content: 'Parking spot 7G-118 at the depot near the glacier' },
];
const CHUNK = 'Prime the centrifugal pump with water before starting it.';
const CONVERSATION_ID = randomUUID();
const DOCUMENT_ID = randomUUID();

/** The migrations folder as it was before tenants (0000 to 0003). */
function migrationsBeforeTenants(): string {
  const source = resolve('migrations');
  const folder = mkdtempSync(join(tmpdir(), 'memrag-migrations-'));
  mkdirSync(join(folder, 'meta'));
  const journal = JSON.parse(readFileSync(join(source, 'meta', '_journal.json'), 'utf8')) as { entries: { idx: number; tag: string }[] };
  journal.entries = journal.entries.filter((e) => e.idx < 4);
  writeFileSync(join(folder, 'meta', '_journal.json'), JSON.stringify(journal));
  for (const { tag } of journal.entries) copyFileSync(join(source, `${tag}.sql`), join(folder, `${tag}.sql`));
  return folder;
}

/** A store as the release before tenants left it: memories and a document with exact BM25 statistics, a conversation. */
async function seedBeforeTenants(db: Db): Promise<void> {
  const embedder = createHashEmbedder(64);
  // The vector tables of that release: turns came later.
  await ensureVectorSpace(
    db,
    embedder,
    VECTOR_TABLES.filter((t) => t.table === 'memories' || t.table === 'chunks'),
  );
  const vectors = await embedder.embed([...MEMORIES.map((m) => m.content), CHUNK]);
  const index = async (kind: 'memory' | 'chunk', rows: { id: string; text: string }[]) => {
    const [postings, termStats, corpusStats, column, total] =
      kind === 'memory'
        ? ['memory_postings', 'memory_term_stats', 'memory_corpus_stats', 'memory_id', 'total']
        : ['postings', 'term_stats', 'corpus_stats', 'chunk_id', 'total_chunks'];
    const df = new Map<string, number>();
    let totalLength = 0;
    for (const row of rows) {
      for (const [term, tf] of defaultAnalyzer.termFrequencies(row.text)) {
        await db.execute(sql`INSERT INTO ${sql.identifier(postings)} (${sql.identifier(column)}, term, tf) VALUES (${row.id}, ${term}, ${tf})`);
        df.set(term, (df.get(term) ?? 0) + 1);
        totalLength += tf;
      }
    }
    for (const [term, n] of df) await db.execute(sql`INSERT INTO ${sql.identifier(termStats)} (term, df) VALUES (${term}, ${n})`);
    await db.execute(sql`INSERT INTO ${sql.identifier(corpusStats)} (id, ${sql.identifier(total)}, total_length, analyzer_id)
      VALUES (1, ${rows.length}, ${totalLength}, ${defaultAnalyzer.id})`);
  };
  const lengthOf = (text: string) => [...defaultAnalyzer.termFrequencies(text).values()].reduce((a, b) => a + b, 0);

  const memoryRows = MEMORIES.map((m) => ({ id: randomUUID(), text: m.content, key: m.key }));
  for (const [i, m] of memoryRows.entries()) {
    await db.execute(sql`INSERT INTO memories (id, agent_id, key, content, embedding, bm25_length)
      VALUES (${m.id}, 'default', ${m.key}, ${m.text}, ${`[${vectors[i]!.join(',')}]`}::vector, ${lengthOf(m.text)})`);
  }
  await index('memory', memoryRows);

  const chunkId = randomUUID();
  await db.execute(sql`INSERT INTO documents (id, title, source, content_hash, format, text)
    VALUES (${DOCUMENT_ID}, 'Pump guide', 'wiki://pump', 'hash-of-the-guide', 'text', ${CHUNK})`);
  await db.execute(sql`INSERT INTO chunks (id, document_id, index, text, start, "end", token_count, bm25_length, embedding)
    VALUES (${chunkId}, ${DOCUMENT_ID}, 0, ${CHUNK}, 0, ${CHUNK.length}, 12, ${lengthOf(CHUNK)}, ${`[${vectors[2]!.join(',')}]`}::vector)`);
  await index('chunk', [{ id: chunkId, text: CHUNK }]);

  await db.execute(sql`INSERT INTO conversations (id, agent_id, title, turn_count, message_count) VALUES (${CONVERSATION_ID}, 'default', 'Pumps', 1, 2)`);
  await db.execute(sql`INSERT INTO messages (conversation_id, seq, turn, role, content) VALUES
    (${CONVERSATION_ID}, 1, 1, 'user', 'How do I prime the pump?'), (${CONVERSATION_ID}, 2, 1, 'assistant', 'With water.')`);
}

function migrationSuite(driver: DatabaseDriver) {
  describe('migrating a store to tenants', () => {
    it("gives every existing row, BM25 statistics included, to tenant 'default', and no other tenant sees them", async () => {
      const migrationsFolder = migrationsBeforeTenants();
      const prepared = await driver
        .provision({ olderRelease: { migrationsFolder, seed: seedBeforeTenants } })
        .finally(() => rmSync(migrationsFolder, { recursive: true, force: true }));
      try {
        const ctx = await createAppContext(loadConfig({ LOG_LEVEL: 'silent', ...prepared.env }), { embedder: createHashEmbedder(64) });
        try {
          const db = ctx.database.db;
          // The regrouping of passages (below) is the start-up backfill job's, done by this process's workers.
          await waitForBackfill(db);
          for (const table of [
            'memories',
            'memory_postings',
            'memory_term_stats',
            'memory_corpus_stats',
            'documents',
            'chunks',
            'postings',
            'term_stats',
            'corpus_stats',
            'conversations',
          ]) {
            const rows = await queryRows<{ tenant_id: string }>(db, sql`SELECT DISTINCT tenant_id FROM ${sql.identifier(table)}`);
            expect(rows, table).toEqual([{ tenant_id: 'default' }]);
          }

          // The statistics carried over exactly: scores are the reference's over the same memories.
          const reference = new InMemoryBm25Index();
          for (const m of MEMORIES) reference.add(m.key, m.content);
          const memories = ctx.memories.forTenant('default');
          const hits = await memories.search('glacier Halvorsen', { mode: 'text' });
          const expected = reference.search('glacier Halvorsen', { topK: 10 });
          expect(hits.map((h) => h.memory.key)).toEqual(expected.map((h) => h.id));
          hits.forEach((h, i) => expect(Math.abs(h.score - expected[i]!.score)).toBeLessThan(1e-9));
          const [chunkHit] = await ctx.search.forTenant('default').search('centrifugal pump', { mode: 'text' });
          expect(chunkHit).toMatchObject({ documentId: DOCUMENT_ID, title: 'Pump guide' });
          // Migration 0005 made the chunk a passage of its own; the start regrouped its document.
          expect(await queryRows(db, sql`SELECT passage_tokens FROM documents`)).toEqual([{ passage_tokens: 512 }]);
          expect(await queryRows(db, sql`SELECT count(*)::int AS n FROM chunks WHERE passage_id = id AND bm25_length IS NOT NULL`)).toEqual([{ n: 1 }]);
          expect((await ctx.conversations.forTenant('default').load(CONVERSATION_ID, 'default'))?.messages).toHaveLength(2);

          // Another tenant starts empty, and may reuse the keys, sources and ids' content of the first.
          const acme = ctx.memories.forTenant('acme');
          expect(await acme.get('ingrid')).toBeNull();
          expect(await acme.search('glacier Halvorsen', { mode: 'text' })).toEqual([]);
          expect(await ctx.search.forTenant('acme').search('centrifugal pump')).toEqual([]);
          expect(await ctx.conversations.forTenant('acme').load(CONVERSATION_ID, 'default')).toBeNull();
          expect(await ctx.documents.forTenant('acme').get(DOCUMENT_ID)).toBeNull();
          expect((await acme.save({ key: 'ingrid', content: 'Another Ingrid entirely' })).created).toBe(true);
          const ingested = await ctx.documents.forTenant('acme').ingest({ content: CHUNK, format: 'text', source: 'wiki://pump' });
          expect(ingested.status).toBe('created');
          expect((await memories.get('ingrid'))?.content).toBe('Ingrid Halvorsen runs the glacier tours');
          // Tenant default's statistics did not move.
          const after = await memories.search('glacier Halvorsen', { mode: 'text' });
          expect(after.map((h) => h.score)).toEqual(hits.map((h) => h.score));
        } finally {
          await ctx.close();
        }
      } finally {
        await prepared.release();
      }
    });
  });
}

describeOnDrivers('tenants', migrationSuite);
