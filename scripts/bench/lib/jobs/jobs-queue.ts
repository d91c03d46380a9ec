import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { type Database, openDatabase } from '../../../../src/db/database.js';
import { createJobLeases } from '../../../../src/jobs/job-leases.js';
import { createJobStore } from '../../../../src/jobs/job-store.js';
import { freshServerDatabase } from '../fresh-server-database.js';
import { N, BLOCKS, serverUrl, median, fmt, summary } from './jobs-config.js';

// ---------------------------------------------------------------------------------------------
// queue: hand-written against pg-boss
// ---------------------------------------------------------------------------------------------

async function handWritten(database: Database, block: string): Promise<number> {
  const store = createJobStore({ db: database.db, tenantId: `hand-${block}` });
  const queue = createJobLeases(database.db);
  const started = performance.now();
  for (let i = 0; i < N; i++) await store.enqueue('ingest', { payload: { i } });
  let done = 0;
  for (;;) {
    const job = await queue.claim('bench', 30_000);
    if (!job) break;
    await database.db.transaction((tx) => queue.complete(tx, job, 'bench', {}));
    done++;
  }
  if (done !== N) throw new Error(`hand-written: ${done} of ${N} jobs done`);
  return (performance.now() - started) / N;
}

type ExecuteSql = (text: string, values: unknown[]) => Promise<{ rows: unknown[] }>;

async function pgBoss(boss: PgBoss, inTransaction: (work: (executeSql: ExecuteSql) => Promise<void>) => Promise<void>, block: string): Promise<number> {
  const name = `bench-${block}`;
  await boss.createQueue(name);
  const started = performance.now();
  for (let i = 0; i < N; i++) await boss.send(name, { i });
  let done = 0;
  for (;;) {
    const [job] = await boss.fetch<{ i: number }>(name);
    if (!job) break;
    // Completed in a transaction of the caller's, as the ingest job's effect and its `succeeded` must be.
    await inTransaction((executeSql) => boss.complete(name, job.id, {}, { db: { executeSql } }));
    done++;
  }
  if (done !== N) throw new Error(`pg-boss: ${done} of ${N} jobs done`);
  return (performance.now() - started) / N;
}

/** pg-boss on PGlite: it cannot open a connection of its own there, only go through its `db` adapter. */
function pgliteAdapter(lite: Pick<PGlite, 'query' | 'exec'>): ExecuteSql {
  // Its migrations are several statements in one string, without parameters: `exec` takes those.
  return async (text, values) => (values && values.length > 0 ? lite.query(text, values) : ((await lite.exec(text)).at(-1) ?? { rows: [] }));
}

export async function benchQueue(): Promise<void> {
  if (serverUrl) {
    const server = await freshServerDatabase(serverUrl, 'memrag_bench_jobs_queue');
    const database = await openDatabase({ url: server.url });
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    // Maintenance and cron off: only the queue's own statements are measured.
    const boss = new PgBoss({ connectionString: server.url, max: 4, supervise: false, schedule: false });
    boss.on('error', (err) => console.error('pg-boss:', err));
    await boss.start();
    const hand: number[] = [];
    const boss10: number[] = [];
    const inTransaction = async (work: (executeSql: ExecuteSql) => Promise<void>) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await work((text, values) => client.query(text, values));
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      } finally {
        client.release();
      }
    };
    for (let b = 0; b < BLOCKS; b++) {
      hand.push(await handWritten(database, `${b}`));
      boss10.push(await pgBoss(boss, inTransaction, `${b}`));
    }
    await boss.stop({ graceful: false, wait: true });
    await pool.end();
    await database.close();
    await server.drop();
    console.log(`queue, PostgreSQL server: ${N} jobs x ${BLOCKS} alternating blocks, enqueue + claim + complete in a transaction, one consumer`);
    console.log(`  hand-written SKIP LOCKED: ${median(hand).toFixed(2)} ms/job   (blocks: ${fmt(hand)})`);
    console.log(`  pg-boss 10:               ${median(boss10).toFixed(2)} ms/job   (blocks: ${fmt(boss10)})`);
    console.log(`  pg-boss / hand-written:   ${(median(boss10) / median(hand)).toFixed(2)}x`);
    summary.handServerMs = median(hand);
    summary.bossServerMs = median(boss10);
  }
  // PGlite: the hand-written queue through the app's database, pg-boss through its adapter on a
  // PGlite of its own (both in this process, one after the other).
  const pglite = await openDatabase({});
  const lite = await PGlite.create();
  const boss = new PgBoss({ db: { executeSql: pgliteAdapter(lite) }, supervise: false, schedule: false });
  let bossError: string | undefined;
  boss.on('error', (err: Error) => (bossError ??= err.message));
  const hand: number[] = [];
  const boss10: number[] = [];
  try {
    await boss.start();
  } catch (err) {
    bossError = (err as Error).message.split('\n')[0];
  }
  for (let b = 0; b < BLOCKS; b++) {
    hand.push(await handWritten(pglite, `${b}`));
    if (bossError) continue;
    try {
      boss10.push(await pgBoss(boss, (work) => lite.transaction((tx) => work(pgliteAdapter(tx))), `${b}`));
    } catch (err) {
      bossError = (err as Error).message.split('\n')[0];
    }
  }
  await boss.stop({ graceful: false, wait: true }).catch(() => {});
  await lite.close();
  await pglite.close();
  console.log(`queue, PGlite: ${N} jobs x ${BLOCKS} alternating blocks, as above`);
  console.log(`  hand-written SKIP LOCKED: ${median(hand).toFixed(2)} ms/job   (blocks: ${fmt(hand)})`);
  if (boss10.length === BLOCKS) {
    console.log(`  pg-boss 10 (db adapter):  ${median(boss10).toFixed(2)} ms/job   (blocks: ${fmt(boss10)})`);
    console.log(`  pg-boss / hand-written:   ${(median(boss10) / median(hand)).toFixed(2)}x`);
  } else {
    console.log(`  pg-boss 10 (db adapter):  fails: ${bossError}`);
  }
  summary.handPgliteMs = median(hand);
}
