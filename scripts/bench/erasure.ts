/**
 * Erasing a user (`DELETE /v1/users/:userId`, src/users/user-erasure.ts): the time to erase one
 * user holding BENCH_MEMORIES memories (default 10,000, each with its `created` event) and
 * BENCH_CONVERSATIONS conversations (default 1,000: two turns of a question and an answer each,
 * indexed as turns, and a run each), in a tenant where another user holds as much again and
 * BENCH_SHARED (default 100) of the agent's shared memories cite the user's conversations. The
 * time is split by what each batch erased (origins marked, jobs, conversations, memories, history
 * events, runs) from the erasure's own progress callback; the BM25 statistics are checked exact
 * afterwards.
 *
 *   npm run bench:erasure                                  (PGlite in memory)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:erasure  (the PostgreSQL server too, in a fresh database)
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { createPgAuditLog } from '../../src/audit/pg-audit-log.js';
import { createTurnIndex } from '../../src/conversations/turn-index.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { conversations, jobs, memories, messages, runs } from '../../src/db/schema/index.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { indexUnindexedMemories } from '../../src/memory/memory-text-index.js';
import { type ErasedCounts, createUserErasure } from '../../src/users/user-erasure.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 10_000);
const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 1_000);
const SHARED = Number(process.env.BENCH_SHARED ?? 100);
const serverUrl = process.env.BENCH_DATABASE_URL;
const TENANT = 'bench';
const embedder = createHashEmbedder(64);
const WORDS = 'tea coffee Oslo Bergen garden piano bicycle river mountain winter summer sister brother doctor office meeting'.split(' ');
const words = (i: number, n: number) => Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ');
const CHUNK = 1_000;

console.log(
  `machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the start`,
);

/** A user's memories (with their `created` events), conversations (indexed as turns) and runs, and a few jobs. */
async function seedUser(database: Database, userId: string): Promise<string[]> {
  const { db } = database;
  for (let start = 0; start < MEMORIES; start += CHUNK) {
    const count = Math.min(CHUNK, MEMORIES - start);
    const contents = Array.from({ length: count }, (_, k) => `${userId} said ${words(start + k, 8)} (fact ${start + k})`);
    const vectors = await embedder.embed(contents);
    await db.insert(memories).values(
      contents.map((content, k) => ({
        tenantId: TENANT,
        agentId: (start + k) % 2 === 0 ? 'default' : 'helper',
        userId,
        key: `fact-${start + k}`,
        content,
        tags: [words(start + k, 1), 'bench'],
        embedding: vectors[k]!,
      })),
    );
  }
  await db.execute(sql`INSERT INTO memory_history (tenant_id, memory_id, agent_id, user_id, key, event, content, tags, actor)
    SELECT tenant_id, id, agent_id, user_id, key, 'created', content, tags, '{"type":"api"}'::jsonb FROM memories WHERE tenant_id = ${TENANT} AND user_id = ${userId}`);

  const ids = Array.from({ length: CONVERSATIONS }, () => randomUUID());
  for (let start = 0; start < CONVERSATIONS; start += CHUNK) {
    const batch = ids.slice(start, start + CHUNK);
    await db
      .insert(conversations)
      .values(batch.map((id, k) => ({ id, tenantId: TENANT, agentId: 'default', userId, title: words(start + k, 4), turnCount: 2, messageCount: 4 })));
    await db.insert(messages).values(
      batch.flatMap((conversationId, k) =>
        [1, 2].flatMap((turn) => [
          { conversationId, seq: turn * 2 - 1, turn, role: 'user', content: `${userId} asks about ${words(start + k + turn, 6)}?` },
          { conversationId, seq: turn * 2, turn, role: 'assistant', content: `About ${words(start + k + turn, 10)}.` },
        ]),
      ),
    );
    await db.insert(runs).values(
      batch.map((conversationId) => ({
        id: randomUUID(),
        tenantId: TENANT,
        agentId: 'default',
        userId,
        conversationId,
        status: 'completed',
        state: { request: { message: `${userId} asks` } },
      })),
    );
  }
  const turnIndex = createTurnIndex({ db, embedder, tenantId: TENANT });
  for (const id of ids) await turnIndex.indexConversation(id);
  await db
    .insert(jobs)
    .values(
      Array.from({ length: 10 }, () => ({ id: randomUUID(), tenantId: TENANT, kind: 'extraction', status: 'succeeded', userId, payload: {}, progress: {} })),
    );
  return ids;
}

async function run(driver: string, database: Database) {
  const { db } = database;
  await ensureVectorSpace(db, embedder);
  const seeding = performance.now();
  const erasedUser = await seedUser(database, 'erased-user');
  await seedUser(database, 'other-user');
  // The agent's shared memories, each drawn from one of the erased user's conversations (a quote of its words).
  const shared = Array.from({ length: SHARED }, (_, i) => `Shared fact ${i}: ${words(i, 6)}`);
  const vectors = await embedder.embed(shared);
  await db.insert(memories).values(
    shared.map((content, i) => ({
      tenantId: TENANT,
      agentId: 'default',
      userId: '',
      key: `shared-${i}`,
      content,
      embedding: vectors[i]!,
      sources: [
        {
          actor: 'extraction',
          conversationId: erasedUser[(i * 7) % erasedUser.length],
          turn: 1,
          quote: { text: 'erased-user asks', start: 0, end: 16 },
          at: new Date().toISOString(),
        },
      ],
    })),
  );
  await indexUnindexedMemories(db);
  await database.statistics.afterBulkWrite();
  const seeded = (performance.now() - seeding) / 1000;

  const erasure = createUserErasure({ db, tenantId: TENANT, audit: createPgAuditLog({ db, tenantId: TENANT }) });
  // Each batch's time goes to what it erased: a batch that erased nothing marked origins.
  const spent: Record<string, number> = {};
  let previous: ErasedCounts = {
    memories: 0,
    conversations: 0,
    messages: 0,
    turns: 0,
    historyEvents: 0,
    runs: 0,
    jobs: 0,
    attachments: 0,
    blocks: 0,
    blockEvents: 0,
  };
  const started = performance.now();
  let last = started;
  const { erased } = await erasure.erase('erased-user', {
    actor: { type: 'open' },
    onBatch: (counts) => {
      const now = performance.now();
      const kind = (['conversations', 'memories', 'historyEvents', 'runs', 'jobs'] as const).find((k) => counts[k] !== previous[k]) ?? 'origins';
      spent[kind] = (spent[kind] ?? 0) + (now - last);
      previous = { ...counts };
      last = now;
    },
  });
  const total = (performance.now() - started) / 1000;
  spent.rest = performance.now() - last;

  const drift = await queryRows(
    db,
    sql`SELECT 'memories' AS corpus FROM memory_corpus_stats s,
        (SELECT count(bm25_length) AS n, coalesce(sum(bm25_length), 0) AS len FROM memories WHERE tenant_id = ${TENANT}) r
        WHERE s.tenant_id = ${TENANT} AND (s.total <> r.n OR s.total_length <> r.len)
      UNION ALL
      SELECT 'turns' FROM turn_corpus_stats s,
        (SELECT count(bm25_length) AS n, coalesce(sum(bm25_length), 0) AS len FROM turns WHERE tenant_id = ${TENANT}) r
        WHERE s.tenant_id = ${TENANT} AND (s.total <> r.n OR s.total_length <> r.len)
      UNION ALL
      SELECT 'memory terms' FROM memory_term_stats s
        FULL JOIN (SELECT tenant_id, term, count(*) AS df FROM memory_postings GROUP BY 1, 2) p USING (tenant_id, term)
        WHERE s.df IS DISTINCT FROM p.df
      UNION ALL
      SELECT 'turn terms' FROM turn_term_stats s
        FULL JOIN (SELECT tenant_id, term, count(*) AS df FROM turn_postings GROUP BY 1, 2) p USING (tenant_id, term)
        WHERE s.df IS DISTINCT FROM p.df`,
  );
  const [marked] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM memories WHERE tenant_id = ${TENANT} AND sources @> '[{"deleted": true}]'`,
  );
  console.log(`\n${driver}: seeded in ${seeded.toFixed(1)} s; erased in ${total.toFixed(2)} s`);
  console.log('  erased:', JSON.stringify(erased), `shared memories marked: ${marked!.n}`);
  console.table(Object.fromEntries(Object.entries(spent).map(([kind, ms]) => [kind, { seconds: (ms / 1000).toFixed(2) }])));
  if (drift.length > 0) throw new Error(`BM25 statistics drifted: ${JSON.stringify(drift)}`);
  const again = performance.now();
  const second = await erasure.erase('erased-user', { actor: { type: 'open' } });
  console.log(`  a second erasure: ${((performance.now() - again) / 1000).toFixed(3)} s, ${JSON.stringify(second.erased)}`);
}

{
  const database = await openDatabase({ dataDir: 'memory://' });
  try {
    await run('PGlite', database);
  } finally {
    await database.close();
  }
}
if (serverUrl) {
  const fresh = await freshServerDatabase(serverUrl, 'memrag_bench_erasure');
  const database = await openDatabase({ url: fresh.url });
  try {
    await run('PostgreSQL server', database);
  } finally {
    await database.close();
    await fresh.drop();
  }
} else {
  console.log('\nPostgreSQL server: skipped (set BENCH_DATABASE_URL)');
}
console.log(
  `\nload average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the end`,
);
