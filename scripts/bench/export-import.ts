/**
 * Export and import (`GET /v1/export`, `POST /v1/import`, src/portability/): memories per second
 * through the HTTP app, for one user holding BENCH_MEMORIES memories (default 10,000; each with a
 * `created` event, every other one an `updated` event too). The export is read to its end; the
 * user is then erased and the export imported back, which re-embeds every memory with the
 * server's embedder (the configured one, by default the bundled USE lite in its worker pool). The
 * embedder alone, over the same texts in the import's batches, is the import's anchor. Afterwards
 * a second export must equal the first but for `exportedAt`, and the BM25 statistics must be exact.
 *
 *   npm run bench:export                                  (PGlite in memory)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:export  (the PostgreSQL server too, in a fresh database;
 *                                                          TEST_DATABASE_URL is used when that is unset;
 *                                                          BENCH_PGLITE=0 runs the server alone)
 *   BENCH_IMPORT=job npm run bench:export                 (both imports as `import` jobs, `POST /v1/import?async=true`,
 *                                                          under the default REQUEST_TIMEOUT_MS: the time to the 202,
 *                                                          then to the job's success, followed at GET /v1/jobs/{id})
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { queryRows } from '../../src/db/query-rows.js';
import { memories } from '../../src/db/schema/index.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { createApp } from '../../src/http/app.js';
import { describeError } from '../../src/api/error-mapping.js';
import { indexUnindexedMemories } from '../../src/memory/memory-text-index.js';
import { IMPORT_MEMORY_BATCH, type ImportReport } from '../../src/portability/tenant-import.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 10_000);
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const USER = 'bench-user';
const WORDS = 'tea coffee Oslo Bergen garden piano bicycle river mountain winter summer sister brother doctor office meeting'.split(' ');
const words = (i: number, n: number) => Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ');
const CHUNK = 1_000;
const AS_JOB = process.env.BENCH_IMPORT === 'job';

console.log(
  `machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the start; ${MEMORIES} memories`,
);

function unitVector(dimensions: number, seed: number): number[] {
  const v = Array.from({ length: dimensions }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const rate = (n: number, ms: number) => `${Math.round(n / (ms / 1000))}/s`;

async function run(driver: string, env: Record<string, string>) {
  const config = loadConfig({
    ...process.env,
    ...env,
    LOG_LEVEL: 'silent',
    MEMORY_EXTRACTION: 'off',
    // A job import must answer within the default timeout; a synchronous one of 10,000 memories cannot.
    REQUEST_TIMEOUT_MS: AS_JOB ? '30000' : '0',
    MAX_UPLOAD_BYTES: String(1 << 30),
  });
  const embedder = await createEmbedder(config);
  const ctx = await createAppContext(config, { embedder, describeError });
  try {
    const app = createApp(ctx);
    const { db } = ctx.database;
    // Seeded in SQL with stand-in vectors: the import embeds anyway, and that is what it measures.
    const contents = Array.from({ length: MEMORIES }, (_, i) => `${USER} said ${words(i, 8)} (fact ${i})`);
    for (let start = 0; start < MEMORIES; start += CHUNK) {
      await db.insert(memories).values(
        contents.slice(start, start + CHUNK).map((content, k) => ({
          tenantId: 'default',
          agentId: (start + k) % 2 === 0 ? 'default' : 'helper',
          userId: USER,
          key: `fact-${start + k}`,
          content,
          tags: [words(start + k, 1), 'bench'],
          metadata: { n: start + k },
          embedding: unitVector(embedder.dimensions, start + k),
        })),
      );
    }
    await db.execute(sql`INSERT INTO memory_history (tenant_id, memory_id, agent_id, user_id, key, event, content, tags, metadata, sources, actor, at)
      SELECT tenant_id, id, agent_id, user_id, key, 'created', content || ' at first', tags, metadata, sources, '{"type":"api"}'::jsonb, created_at - interval '1 hour'
      FROM memories WHERE user_id = ${USER}`);
    await db.execute(sql`INSERT INTO memory_history (tenant_id, memory_id, agent_id, user_id, key, event, content, previous_content, tags, metadata, sources, actor, at)
      SELECT tenant_id, id, agent_id, user_id, key, 'updated', content, content || ' at first', tags, metadata, sources, '{"type":"api"}'::jsonb, created_at
      FROM memories WHERE user_id = ${USER} AND (metadata->>'n')::int % 2 = 0`);
    await indexUnindexedMemories(db);
    await ctx.database.statistics.afterBulkWrite();
    // The worker pool loads its model on the first call: not part of any figure.
    await ctx.embedder.embed(contents.slice(0, IMPORT_MEMORY_BATCH));

    let started = performance.now();
    const exported = await (await app.request(`/v1/export?userId=${USER}`)).text();
    const exportMs = performance.now() - started;
    const lines = exported.split('\n').filter((l) => l !== '');
    if (lines.length !== MEMORIES + 1) throw new Error(`the export has ${lines.length} lines, not ${MEMORIES + 1}`);

    const erased = await app.request(`/v1/users/${USER}`, { method: 'DELETE' });
    if (erased.status !== 200) throw new Error(`erasure: ${erased.status} ${await erased.text()}`);

    /** One import, within the request or as a job followed to its end: its report, and how long the request took to answer. */
    const importOnce = async (): Promise<{ report: ImportReport; answerMs: number; progressSeen: number }> => {
      const posted = performance.now();
      const res = await app.request(`/v1/import?async=${AS_JOB ? 'true' : 'false'}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: exported,
      });
      const answerMs = performance.now() - posted;
      if (!AS_JOB) return { report: (await res.json()) as ImportReport, answerMs, progressSeen: 0 };
      if (res.status !== 202) throw new Error(`import: ${res.status} ${await res.text()}`);
      const { job } = (await res.json()) as { job: { id: string } };
      const seen = new Set<number>();
      for (;;) {
        const { job: now } = (await (await app.request(`/v1/jobs/${job.id}`)).json()) as {
          job: { status: string; progress: { done: number }; result: ImportReport | null; error: unknown };
        };
        if (now.status === 'succeeded') return { report: now.result!, answerMs, progressSeen: seen.size };
        if (now.status === 'failed' || now.status === 'cancelled') throw new Error(`import job ${now.status}: ${JSON.stringify(now.error)}`);
        seen.add(now.progress.done);
        await new Promise((r) => setTimeout(r, 200));
      }
    };

    started = performance.now();
    const first = await importOnce();
    const importMs = performance.now() - started;
    const report = first.report;
    if (report.imported.memories !== MEMORIES || report.errors.length > 0) throw new Error(`import: ${JSON.stringify(report).slice(0, 500)}`);

    started = performance.now();
    const reimport = await importOnce();
    const again = reimport.report;
    const reimportMs = performance.now() - started;
    if (again.skipped !== MEMORIES) throw new Error(`re-import: ${JSON.stringify(again).slice(0, 500)}`);

    started = performance.now();
    for (let i = 0; i < contents.length; i += IMPORT_MEMORY_BATCH) await ctx.embedder.embed(contents.slice(i, i + IMPORT_MEMORY_BATCH));
    const embedMs = performance.now() - started;

    const second = await (await app.request(`/v1/export?userId=${USER}`)).text();
    const timeless = (text: string) => text.replace(/"exportedAt":"[^"]+"/, '');
    if (timeless(second) !== timeless(exported)) throw new Error('the export after the import differs from the one before');
    const drift = await queryRows(
      db,
      sql`SELECT 'memories' AS corpus FROM memory_corpus_stats s,
          (SELECT tenant_id, count(bm25_length) AS n, coalesce(sum(bm25_length), 0) AS len FROM memories GROUP BY 1) r
          WHERE s.tenant_id = r.tenant_id AND (s.total <> r.n OR s.total_length <> r.len)
        UNION ALL
        SELECT 'memory terms' FROM memory_term_stats s
          FULL JOIN (SELECT tenant_id, term, count(*) AS df FROM memory_postings GROUP BY 1, 2) p USING (tenant_id, term)
          WHERE s.df IS DISTINCT FROM p.df`,
    );
    if (drift.length > 0) throw new Error(`BM25 statistics drifted: ${JSON.stringify(drift)}`);

    console.log(`\n${driver} (embedder ${embedder.id}, ${embedder.dimensions} dimensions):`);
    console.table({
      export: { seconds: (exportMs / 1000).toFixed(2), 'memories/s': rate(MEMORIES, exportMs), MB: (Buffer.byteLength(exported) / 1e6).toFixed(1) },
      [AS_JOB ? 'import (job)' : 'import']: { seconds: (importMs / 1000).toFixed(2), 'memories/s': rate(MEMORIES, importMs), MB: '' },
      'embedder alone': { seconds: (embedMs / 1000).toFixed(2), 'memories/s': rate(MEMORIES, embedMs), MB: '' },
      're-import (all skipped)': { seconds: (reimportMs / 1000).toFixed(2), 'memories/s': rate(MEMORIES, reimportMs), MB: '' },
    });
    console.log(`  history events imported: ${report.imported.historyEvents}; re-import: ${JSON.stringify(again)}`);
    if (AS_JOB) {
      console.log(
        `  as jobs: the import answered 202 in ${first.answerMs.toFixed(0)} ms (the re-import in ${reimport.answerMs.toFixed(0)} ms; ` +
          `REQUEST_TIMEOUT_MS ${config.REQUEST_TIMEOUT_MS}); ${first.progressSeen} distinct progress points seen while it ran`,
      );
    }
  } finally {
    await ctx.close();
  }
}

if (process.env.BENCH_PGLITE !== '0') await run('PGlite', { DATA_DIR: 'memory://' });
if (serverUrl) {
  const fresh = await freshServerDatabase(serverUrl, 'memrag_bench_export');
  try {
    await run('PostgreSQL server', { DATABASE_URL: fresh.url });
  } finally {
    await fresh.drop();
  }
} else {
  console.log('\nPostgreSQL server: skipped (set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
}
