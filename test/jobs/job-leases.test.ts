import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { Database, Db } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createDocumentStore } from '../../src/documents/document-store.js';
import { ingestJobHandler } from '../../src/jobs/ingest-job.js';
import { createJobLeases } from '../../src/jobs/job-leases.js';
import { type JobAttempt, startJobRunner } from '../../src/jobs/job-runner.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import { JobLeaseLostError } from '../../src/jobs/job-types.js';
import { createLogger } from '../../src/observability/logger.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { describeOnDrivers } from '../support/database-drivers.js';

const TEXT = '# Kiln notes\n\nThe anagama kiln fires for five days.\n\n## Ash\n\nWood ash melts into a natural glaze on the shoulders of the pots.';

async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`timed out; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The BM25 statistics and postings of a tenant's passages, as exact numbers. */
async function bm25State(db: Db, tenantId: string) {
  const corpus = await queryRows(db, sql`SELECT total_chunks, total_length, analyzer_id FROM corpus_stats WHERE tenant_id = ${tenantId}`);
  const terms = await queryRows(db, sql`SELECT term, df FROM term_stats WHERE tenant_id = ${tenantId} ORDER BY term`);
  const chunks = await queryRows<{ n: number | string }>(db, sql`SELECT count(*) AS n FROM chunks WHERE tenant_id = ${tenantId}`);
  const documents = await queryRows<{ n: number | string }>(db, sql`SELECT count(*) AS n FROM documents WHERE tenant_id = ${tenantId}`);
  return { corpus, terms, chunks: Number(chunks[0]!.n), documents: Number(documents[0]!.n) };
}

describeOnDrivers('job queue', (driver) => {
  let database: Database;
  const embedder = createHashEmbedder(64);
  const logger = createLogger('silent');
  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, embedder);
  });
  afterAll(() => database?.close());
  beforeEach(async () => {
    await database.db.execute(sql`DELETE FROM jobs`);
  });

  it('claims each job once across concurrent claimers (SKIP LOCKED), oldest first', async () => {
    const store = createJobStore({ db: database.db, tenantId: 'q1' });
    const queued = [];
    for (let i = 0; i < 6; i++) queued.push(await store.enqueue('ingest', { payload: { i } }));
    const queue = createJobLeases(database.db);
    const claimed = await Promise.all(Array.from({ length: 8 }, (_, i) => queue.claim(`w${i}`, 30_000)));
    const ids = claimed.flatMap((j) => (j ? [j.id] : []));
    expect(ids.sort()).toEqual(queued.map((j) => j.id).sort());
    expect(claimed.filter((j) => j === undefined)).toHaveLength(2);
    expect(claimed.every((j) => !j || (j.status === 'running' && j.attempt === 1))).toBe(true);
  });

  it('fences a worker whose lease ran out: another takes the job, and the first one can neither report nor complete', async () => {
    const store = createJobStore({ db: database.db, tenantId: 'q2' });
    const job = await store.enqueue('ingest', { payload: {} });
    const queue = createJobLeases(database.db);
    const first = (await queue.claim('a', 300))!;
    expect(first.id).toBe(job.id);
    expect(await queue.claim('b', 300)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 400));
    const second = (await queue.claim('b', 30_000))!;
    expect(second).toMatchObject({ id: job.id, attempt: 2 });
    await expect(queue.progress(first, 'a', 30_000, { stage: 'embed', done: 1, total: 2 })).rejects.toBeInstanceOf(JobLeaseLostError);
    await expect(database.db.transaction((tx) => queue.complete(tx, first, 'a', { documentId: 'x' }))).rejects.toBeInstanceOf(JobLeaseLostError);
    await database.db.transaction((tx) => queue.complete(tx, second, 'b', { ok: true }));
    expect(await store.get(job.id)).toMatchObject({ status: 'succeeded', result: { ok: true }, attempt: 2 });
  });

  it('retries a transient failure after its backoff, and fails for good once attempts run out', async () => {
    const store = createJobStore({ db: database.db, tenantId: 'q3', maxAttempts: 2 });
    const job = await store.enqueue('ingest', { payload: {} });
    const queue = createJobLeases(database.db);
    const one = (await queue.claim('a', 30_000))!;
    expect(await queue.fail(one, 'a', { code: 'transient', message: 'boom' }, 200)).toBe(true);
    expect(await store.get(job.id)).toMatchObject({ status: 'queued', error: { code: 'transient' } });
    expect(await queue.claim('a', 30_000)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 250));
    const two = (await queue.claim('a', 30_000))!;
    expect(two.attempt).toBe(2);
    await queue.fail(two, 'a', { code: 'transient', message: 'boom again' }, 200);
    expect(await store.get(job.id)).toMatchObject({ status: 'failed', error: { message: 'boom again' } });
  });

  it('cancels by compare-and-set: a queued job is never claimed, an ended one keeps its ending', async () => {
    const store = createJobStore({ db: database.db, tenantId: 'q4' });
    const queue = createJobLeases(database.db);
    const job = await store.enqueue('ingest', { payload: {} });
    expect((await store.cancel(job.id))!.cancelled).toBe(true);
    expect(await queue.claim('a', 30_000)).toBeUndefined();
    expect((await store.cancel(job.id))!).toMatchObject({ cancelled: false, job: { status: 'cancelled' } });
    expect(await createJobStore({ db: database.db, tenantId: 'other' }).cancel(job.id)).toBeUndefined();
  });

  it("lists a tenant's jobs by status, newest first, page by page", async () => {
    const store = createJobStore({ db: database.db, tenantId: 'q5' });
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await store.enqueue('ingest', { payload: { i } }));
      // Jobs made within one tick of the database's clock tie on created_at and fall back to id
      // order: each waits for the next millisecond, so "newest first" is the order they were made.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await store.cancel(made[1]!.id);
    const first = await store.list({ limit: 2 });
    const second = await store.list({ limit: 10, cursor: first.nextCursor! });
    expect([...first.items, ...second.items].map((j) => j.id)).toEqual(made.map((j) => j.id).reverse());
    expect((await store.list({ status: 'cancelled', limit: 10 })).items.map((j) => j.id)).toEqual([made[1]!.id]);
    expect((await createJobStore({ db: database.db, tenantId: 'q5-other' }).list({ limit: 10 })).items).toEqual([]);
  });

  it('settles a batch whose last two items end at the same moment', async () => {
    const store = createJobStore({ db: database.db, tenantId: 'q9' });
    const queue = createJobLeases(database.db);
    const batch = await store.enqueueBatch('ingest', [{ payload: { i: 1 } }, { payload: { i: 2 } }, { payload: { i: 3 } }]);
    const [one, two, three] = [(await queue.claim('a', 30_000))!, (await queue.claim('b', 30_000))!, (await queue.claim('c', 30_000))!];
    await database.db.transaction((tx) => queue.complete(tx, three, 'c', { ok: true }));
    // The first ending holds its transaction open; the second ends meanwhile, then the first commits.
    let reached!: () => void;
    let release!: () => void;
    const atGate = new Promise<void>((r) => (reached = r));
    const gate = new Promise<void>((r) => (release = r));
    const first = database.db.transaction(async (tx) => {
      await queue.complete(tx, one, 'a', { ok: true });
      reached();
      await gate;
    });
    await atGate;
    const second = database.db.transaction((tx) => queue.complete(tx, two, 'b', { ok: true }));
    await new Promise((r) => setTimeout(r, 200));
    release();
    await Promise.all([first, second]);
    expect(await store.get(batch.id)).toMatchObject({ status: 'succeeded', progress: { done: 3, total: 3 } });
  });

  it('wakes one idle worker for a queued job and one for each item of a batch', async () => {
    const leases = createJobLeases(database.db);
    // Claims begun, and claims answered: a worker whose claim was answered empty is asleep.
    let claims = 0;
    let answered = 0;
    const queue = {
      ...leases,
      claim: (...args: Parameters<typeof leases.claim>) => (claims++, leases.claim(...args).finally(() => answered++)),
    };
    const ran: string[] = [];
    const release: (() => void)[] = [];
    // A poll far longer than the test: only a wake makes a sleeping worker claim.
    const runner = startJobRunner({
      queue,
      db: database.db,
      handlers: { ingest: (a: JobAttempt) => new Promise((resolve) => (ran.push(a.job.id), release.push(() => resolve({ ok: true })))) },
      logger,
      concurrency: 3,
      leaseMs: 30_000,
      pollMs: 600_000,
      retryBaseMs: 10,
    });
    const store = createJobStore({ db: database.db, tenantId: 'q8', onEnqueued: (jobs) => runner.wake(jobs) });
    try {
      await waitFor(
        async () => answered,
        (n) => n === 3,
      );
      const job = await store.enqueue('ingest', { payload: {} });
      await waitFor(
        async () => ran,
        (r) => r.length === 1,
      );
      // The one worker woken claimed it; the other two still sleep.
      expect(claims).toBe(4);
      release.shift()!();
      await waitFor(
        () => store.get(job.id),
        (j) => j!.status === 'succeeded',
      );
      // Done, its worker looked for more, found none and sleeps again.
      await waitFor(
        async () => answered,
        (n) => n === 5,
      );
      const batch = await store.enqueueBatch('ingest', [{ payload: { i: 1 } }, { payload: { i: 2 } }, { payload: { i: 3 } }]);
      // All three run at once: three workers woken, none left to its poll.
      await waitFor(
        async () => ran,
        (r) => r.length === 4,
      );
      expect(claims).toBe(8);
      for (const done of release.splice(0)) done();
      await waitFor(
        () => store.get(batch.id),
        (j) => j!.status === 'succeeded',
      );
    } finally {
      for (const done of release.splice(0)) done();
      await runner.stop();
    }
  });

  it('ingests through the runner, reporting every stage, and marks the job succeeded with its document', async () => {
    const store = createJobStore({ db: database.db, tenantId: 'q6' });
    const job = await store.enqueue('ingest', { payload: { title: 'Kiln', format: 'markdown' }, content: TEXT });
    const stages: string[] = [];
    const ingest = ingestJobHandler({ db: database.db, embedder });
    const runner = startJobRunner({
      queue: createJobLeases(database.db),
      db: database.db,
      handlers: { ingest: (a: JobAttempt) => ingest({ ...a, report: (p) => (stages.push(p.stage), a.report(p)) }) },
      logger,
      concurrency: 1,
      leaseMs: 5_000,
      pollMs: 20,
      retryBaseMs: 10,
    });
    try {
      const done = await waitFor(
        () => store.get(job.id),
        (j) => j!.status === 'succeeded',
      );
      expect(done!.result).toMatchObject({ status: 'created' });
      expect(new Set(stages)).toEqual(new Set(['parse', 'normalise', 'chunk', 'embed', 'write']));
      const document = await createDocumentStore({ db: database.db, embedder, tenantId: 'q6' }).get(done!.result!.documentId as string);
      expect(document?.title).toBe('Kiln');
    } finally {
      await runner.stop();
    }
  });

  it('has an exactly-once effect when a worker dies mid-job: one document, chunks and BM25 statistics as from one ingest', async () => {
    const tenant = 'q7';
    const store = createJobStore({ db: database.db, tenantId: tenant });
    const job = await store.enqueue('ingest', { payload: { format: 'markdown', source: 'kiln://notes' }, content: TEXT });
    const queue = createJobLeases(database.db);
    const ingest = ingestJobHandler({ db: database.db, embedder });
    // Worker A takes the job and freezes while embedding (as if stopped, or killed and its
    // process lingering): no heartbeats, its lease runs out, and worker B does the job. Then A
    // wakes up and writes: fenced by the attempt, its whole write rolls back.
    const claimedByA = (await queue.claim('A', 300))!;
    let release!: () => void;
    const frozen = new Promise<void>((r) => (release = r));
    const frozenEmbedder = { ...embedder, embed: async (texts: string[]) => (await frozen, embedder.embed(texts)) };
    const outcomeA = ingestJobHandler({ db: database.db, embedder: frozenEmbedder })({
      job: claimedByA,
      signal: new AbortController().signal,
      report: () => {},
      checkpoint: () => queue.progress(claimedByA, 'A', 300),
      complete: (tx, result) => queue.complete(tx, claimedByA, 'A', result),
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    await new Promise((r) => setTimeout(r, 400));
    const claimedByB = (await queue.claim('B', 30_000))!;
    expect(claimedByB).toMatchObject({ id: job.id, attempt: 2 });
    const resultB = await ingest({
      job: claimedByB,
      signal: new AbortController().signal,
      report: () => {},
      checkpoint: () => queue.progress(claimedByB, 'B', 30_000),
      complete: (tx, result) => queue.complete(tx, claimedByB, 'B', result),
    });
    release();
    // A wakes up and tries to commit: fenced, its whole write is rolled back.
    expect(await outcomeA).toBeInstanceOf(JobLeaseLostError);
    expect(await store.get(job.id)).toMatchObject({ status: 'succeeded', result: { documentId: resultB.documentId } });
    const after = await bm25State(database.db, tenant);
    expect(after.documents).toBe(1);
    // The same document ingested once, in a tenant of its own, gives the same statistics.
    await createDocumentStore({ db: database.db, embedder, tenantId: `${tenant}-once` }).ingest({ content: TEXT, format: 'markdown', source: 'kiln://notes' });
    const once = await bm25State(database.db, `${tenant}-once`);
    expect(after).toEqual(once);
  });

  it('settles a batch from its items: one failing item does not fail the others', async () => {
    const store = createJobStore({ db: database.db, tenantId: 'q8' });
    const batch = await store.enqueueBatch('ingest', [
      { payload: { format: 'markdown', title: 'good' }, content: TEXT },
      { payload: { format: 'pdf', filename: 'bad.pdf' }, content: new TextEncoder().encode('not a pdf at all') },
      { payload: { format: 'text', title: 'also good' }, content: 'Stoneware is fired hotter than earthenware.' },
    ]);
    const ingest = ingestJobHandler({ db: database.db, embedder });
    const runner = startJobRunner({
      queue: createJobLeases(database.db),
      db: database.db,
      handlers: { ingest },
      logger,
      concurrency: 2,
      leaseMs: 5_000,
      pollMs: 20,
      retryBaseMs: 10,
      isPermanent: (err) => (err instanceof Error && err.name === 'DocumentParseError' ? { code: 'invalid_document', message: err.message } : undefined),
    });
    try {
      const done = await waitFor(
        () => store.get(batch.id),
        (j) => j!.status === 'succeeded',
      );
      expect(done!.progress).toEqual({ stage: 'items', done: 3, total: 3 });
      const view = await store.batch(batch.id);
      expect(view.counts).toEqual({ queued: 0, running: 0, succeeded: 2, failed: 1, cancelled: 0 });
      expect(view.items.map((i) => i.status)).toEqual(['succeeded', 'failed', 'succeeded']);
      expect(view.items[1]!.error).toMatchObject({ code: 'invalid_document' });
    } finally {
      await runner.stop();
    }
  });
});
