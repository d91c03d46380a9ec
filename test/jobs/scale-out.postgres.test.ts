import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeEmbeddingsServer, startFakeEmbeddingsServer } from '../../testkit/fake-embeddings-server.js';
import { markerWord } from '../robustness/support/marker-word.js';
import type { LogLine } from '../support/captured-logger.js';
import { acquireRealPostgres, type RealPostgres, realPostgresSkipReason } from '../support/real-postgres.js';
import { baseUrlOf, isListening, type SpawnedServer, send, spawnServer, stopServers, waitFor } from '../support/spawned-server.js';

/**
 * Issue 16, item 8: ingestion scales out on workers that share one PostgreSQL server. Two API
 * processes (WORKERS_IN_PROCESS=false) take 200 asynchronous documents between them; two worker
 * processes (`npm run worker`) do the jobs; one worker is killed with SIGKILL mid-run, and the
 * jobs it held are taken over by the other once their lease (JOB_LEASE_MS) runs out. Every job
 * succeeds once, with one document each, BM25 statistics equal to a recount from the postings,
 * and every document is found through either API.
 *
 * The embedder is the OpenAI-compatible fake on 127.0.0.1, answering after a delay as a model
 * would: cheap and deterministic, and slow enough that the kill lands while jobs are running.
 */
const DOCUMENTS = 200;
const LEASE_MS = 1_500;
const EMBED_DELAY_MS = 60;

const children: SpawnedServer[] = [];

function start(name: string, script: string, env: Record<string, string>, ready: (line: LogLine) => boolean): SpawnedServer {
  const started = spawnServer({ name, script, env, ready });
  children.push(started);
  return started;
}

const title = (i: number) => `Glaze note ${i}`;
const text = (i: number) => `# ${title(i)}\n\nThe ${markerWord(i)} glaze is fired at cone ${i % 12} in a reduction kiln.`;

const skipReason = await realPostgresSkipReason();

describe('scale-out on the PostgreSQL server: two API processes, two worker processes', () => {
  if (skipReason) {
    it.skip(`skipped: ${skipReason}`, () => {});
    return;
  }

  let server: RealPostgres;
  let embeddings: FakeEmbeddingsServer;
  let admin: pg.Client;
  let apis: string[];
  let workers: { process: SpawnedServer; workerId: string }[];

  beforeAll(async () => {
    const acquired = await acquireRealPostgres();
    if ('skipReason' in acquired) throw new Error(acquired.skipReason);
    server = acquired;
    embeddings = await startFakeEmbeddingsServer();
    embeddings.delayMs = EMBED_DELAY_MS;
    const env = {
      DATABASE_URL: server.url,
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_BASE_URL: embeddings.baseURL,
      EMBEDDING_API_KEY: 'test',
      JOB_LEASE_MS: String(LEASE_MS),
      JOB_POLL_MS: '50',
      JOB_CONCURRENCY: '2',
    };
    const api = (name: string) => start(name, 'src/main.ts', { ...env, WORKERS_IN_PROCESS: 'false' }, isListening);
    const worker = (name: string) => start(name, 'src/worker-main.ts', env, (l) => l.msg === 'memrag worker consuming jobs');
    // All four at once: the migrations are serialised by their advisory lock.
    const started = [api('api-1'), api('api-2'), worker('worker-1'), worker('worker-2')];
    const ready = await Promise.all(started.map((c) => c.ready));
    apis = [ready[0]!, ready[1]!].map(baseUrlOf);
    workers = [2, 3].map((i) => ({ process: started[i]!, workerId: ready[i]!.workerId as string }));
    admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
  }, 120_000);

  afterAll(async () => {
    await stopServers(children);
    await admin?.end().catch(() => {});
    await embeddings?.close().catch(() => {});
    await server?.release();
  }, 60_000);

  const query = async <T extends Record<string, unknown>>(text: string, values: unknown[] = []) => (await admin.query<T>(text, values)).rows;

  it('200 documents through both APIs, a worker killed mid-run: every job succeeds once, BM25 statistics exact, searchable through either API', async () => {
    expect(new Set(workers.map((w) => w.workerId)).size).toBe(2);
    const jobIds: string[] = [];
    // Submitted ten at a time, alternating between the two APIs.
    for (let i = 0; i < DOCUMENTS; i += 10) {
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, k) =>
          send(apis[(i + k) % 2]!, 'POST', '/v1/documents', { title: title(i + k), text: text(i + k), format: 'markdown', async: true }),
        ),
      );
      for (const r of replies) {
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        jobIds.push(r.body.job.id as string);
      }
    }
    expect(new Set(jobIds).size).toBe(DOCUMENTS);

    // Mid-run: some jobs done, worker 1 holding at least one, many still to go. The worker is frozen
    // (SIGSTOP) before what it holds is read, so it cannot finish those jobs between the read and the
    // kill; a commit already on the wire lands in the pause. If it held nothing by then, it runs on
    // and is caught again.
    const [victim, survivor] = workers as [(typeof workers)[number], (typeof workers)[number]];
    let orphaned: string[] = [];
    for (let attempt = 0; orphaned.length === 0; attempt++) {
      expect(attempt, 'worker 1 never held a job when frozen').toBeLessThan(20);
      await waitFor(
        'worker 1 to hold a job mid-run',
        () =>
          query<{ held: number; done: number }>(
            `SELECT count(*) FILTER (WHERE status = 'running' AND worker_id = $1)::int AS held, count(*) FILTER (WHERE status = 'succeeded')::int AS done FROM jobs`,
            [victim.workerId],
          ),
        (rows) => rows[0]!.held > 0 && rows[0]!.done >= DOCUMENTS / 5,
        60_000,
      );
      victim.process.child.kill('SIGSTOP');
      await new Promise((r) => setTimeout(r, 300));
      orphaned = (await query<{ id: string }>(`SELECT id FROM jobs WHERE status = 'running' AND worker_id = $1`, [victim.workerId])).map((r) => r.id);
      if (orphaned.length === 0) victim.process.child.kill('SIGCONT');
    }
    victim.process.child.kill('SIGKILL');
    await victim.process.exited;
    const [{ open }] = (await query<{ open: number }>(`SELECT count(*)::int AS open FROM jobs WHERE status IN ('queued', 'running')`)) as [{ open: number }];
    expect(open, 'the kill came after the run had ended').toBeGreaterThan(orphaned.length);

    await waitFor(
      'every job to end',
      () => query<{ open: number }>(`SELECT count(*)::int AS open FROM jobs WHERE status NOT IN ('succeeded', 'failed', 'cancelled')`),
      (rows) => rows[0]!.open === 0,
      90_000,
    );

    // Every job succeeded once, each with a document of its own.
    const jobs = await query<{ id: string; status: string; attempt: number; worker_id: string; document_id: string }>(
      `SELECT id, status, attempt, worker_id, result->>'documentId' AS document_id FROM jobs WHERE id = ANY($1::uuid[])`,
      [jobIds],
    );
    expect(jobs).toHaveLength(DOCUMENTS);
    expect(jobs.filter((j) => j.status !== 'succeeded')).toEqual([]);
    expect(new Set(jobs.map((j) => j.document_id)).size).toBe(DOCUMENTS);
    // The dead worker's jobs were finished by the other, on a later attempt.
    for (const id of orphaned) {
      expect(jobs.find((j) => j.id === id)).toMatchObject({ status: 'succeeded', worker_id: survivor.workerId, attempt: 2 });
    }
    // Both workers did work: the queue was shared.
    expect(new Set(jobs.map((j) => j.worker_id))).toEqual(new Set([victim.workerId, survivor.workerId]));

    // One document per submission, and no other.
    const documents = await query<{ id: string; title: string }>(`SELECT id, title FROM documents`);
    expect(documents).toHaveLength(DOCUMENTS);
    expect(new Set(documents.map((d) => d.id))).toEqual(new Set(jobs.map((j) => j.document_id)));
    expect(documents.map((d) => d.title).sort()).toEqual(Array.from({ length: DOCUMENTS }, (_, i) => title(i)).sort());
    // Chunks once: every document has the chunks 0..n-1, none twice.
    const chunkRuns = await query<{ document_id: string; n: number; max: number }>(
      `SELECT document_id, count(*)::int AS n, max(index)::int AS max FROM chunks GROUP BY document_id`,
    );
    expect(chunkRuns).toHaveLength(DOCUMENTS);
    expect(chunkRuns.filter((c) => c.n !== c.max + 1)).toEqual([]);

    // BM25 statistics exactly as a recount from the chunks and postings gives them.
    const corpus = await query<{ tenant_id: string; total_chunks: string; total_length: string }>(
      `SELECT tenant_id, total_chunks, total_length FROM corpus_stats`,
    );
    const [recount] = await query<{ passages: string; length: string }>(
      `SELECT count(*) AS passages, coalesce(sum(bm25_length), 0) AS length FROM chunks WHERE passage_id = id`,
    );
    expect(corpus.map((c) => [c.tenant_id, Number(c.total_chunks), Number(c.total_length)])).toEqual([
      ['default', Number(recount!.passages), Number(recount!.length)],
    ]);
    const [postingLength] = await query<{ length: string }>(`SELECT coalesce(sum(tf), 0) AS length FROM postings`);
    expect(Number(postingLength!.length)).toBe(Number(recount!.length));
    const dfDrift = await query(
      `SELECT coalesce(s.term, p.term) AS term, s.df, p.df AS recounted
         FROM term_stats s FULL JOIN (SELECT tenant_id, term, count(*)::int AS df FROM postings GROUP BY tenant_id, term) p
           ON p.tenant_id = s.tenant_id AND p.term = s.term
        WHERE s.df IS DISTINCT FROM p.df`,
    );
    expect(dfDrift).toEqual([]);
    // Each marker word is in exactly one passage.
    const markers = await query<{ term: string; df: number }>(`SELECT term, df FROM term_stats WHERE term LIKE 'zx%q'`);
    expect(markers).toHaveLength(DOCUMENTS);
    expect(markers.every((m) => m.df === 1)).toBe(true);

    // Searchable through either API: the orphaned documents and a sample of the rest, each by its marker word.
    const byTitle = new Map(documents.map((d) => [d.title, d.id]));
    const orphanedDocs = new Set(jobs.filter((j) => orphaned.includes(j.id)).map((j) => j.document_id));
    const sample = Array.from({ length: DOCUMENTS }, (_, i) => i).filter((i) => i % 25 === 0 || orphanedDocs.has(byTitle.get(title(i))!));
    for (const i of sample) {
      for (const base of apis) {
        const res = await send(base, 'POST', '/v1/search', { query: markerWord(i), mode: 'text' });
        expect(res.status).toBe(200);
        expect(res.body.hits.map((h: { documentId: string }) => h.documentId)).toEqual([byTitle.get(title(i))]);
      }
    }
    // Either API reads any job, whichever process took it and worked on it.
    for (const [k, id] of [jobIds[0]!, jobIds[1]!, ...orphaned].entries()) {
      const res = await send(apis[k % 2]!, 'GET', `/v1/jobs/${id}`);
      expect(res.body.job).toMatchObject({ id, status: 'succeeded' });
    }
  });
});
