import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { queryRows } from '../../src/db/query-rows.js';
import type { JobAttempt } from '../../src/jobs/job-runner.js';
import { type ClaimedJob, JobLeaseLostError, type JobProgress } from '../../src/jobs/job-types.js';
import type { ExportRecord } from '../../src/portability/export-lines.js';
import { type ImportItem, importJobHandler } from '../../src/portability/import-job.js';
import { exportedMemory } from '../../testkit/exported-memory.js';
import { createTestContext } from '../http/http-test-context.js';

const memory = (userId: string, i: number): ExportRecord => ({ type: 'memory', ...exportedMemory(userId, i) });

describe('the import job handler', () => {
  let ctx: AppContext;
  beforeAll(async () => {
    ctx = await createTestContext({ WORKERS_IN_PROCESS: 'false' });
  });
  afterAll(() => ctx?.close());

  const items: ImportItem[] = [
    ...Array.from({ length: 250 }, (_, i) => ({ line: i + 2, record: memory('lea', i) })),
    { line: 252, error: 'not valid JSON: boom' },
  ];
  const content = items.map((i) => JSON.stringify(i)).join('\n');
  const claimed = (tenantId: string, progress: JobProgress): ClaimedJob => ({
    id: randomUUID(),
    kind: 'import',
    status: 'running',
    progress,
    result: null,
    error: null,
    parentId: null,
    attempt: 1,
    createdAt: new Date().toISOString(),
    startedAt: null,
    finishedAt: null,
    eventSeq: 0,
    tenantId,
    payload: { format: 'memrag', items: items.length, contentEncoding: 'text' },
    content,
    maxAttempts: 3,
  });
  /** An attempt whose worker dies at its `dieAt`th checkpoint, the progress recorded being `recorded()`'s. */
  const attempt = (job: ClaimedJob, dieAt: number, keep: (n: number) => boolean) => {
    let recorded = job.progress;
    let checkpoints = 0;
    let reports = 0;
    const a: JobAttempt = {
      job,
      signal: new AbortController().signal,
      report(p) {
        reports += 1;
        if (keep(reports)) recorded = p;
      },
      async checkpoint() {
        checkpoints += 1;
        if (checkpoints === dieAt) throw new JobLeaseLostError(job.id);
      },
      async complete() {},
    };
    return { a, recorded: () => recorded };
  };
  const handler = () => importJobHandler({ db: ctx.database.db, embedder: ctx.embedder, conversations: ctx.conversations, documents: ctx.documents });
  const rows = (tenantId: string) =>
    queryRows<{ key: string; content: string }>(ctx.database.db, sql`SELECT key, content FROM memories WHERE tenant_id = ${tenantId} ORDER BY key`);

  it('ends a retry after a worker died mid-way, between a batch written and its progress recorded, as a clean run does', async () => {
    const clean = await handler()(attempt(claimed('clean', { stage: 'queued', done: 0, total: 0 }), 0, () => true).a);
    expect(clean).toEqual({
      imported: { memories: 250, conversations: 0, agents: 0, documents: 0, historyEvents: 0, blocks: 0 },
      skipped: 0,
      errors: [{ line: 252, message: 'not valid JSON: boom' }],
      errorCount: 1,
    });

    // The first batch's progress is recorded, the second batch is written but its progress lost with the worker.
    const first = attempt(claimed('crashed', { stage: 'queued', done: 0, total: 0 }), 2, (n) => n === 1);
    await expect(handler()(first.a)).rejects.toThrow(JobLeaseLostError);
    expect(first.recorded()).toMatchObject({ stage: 'import', done: 100, total: 251, imported: { memories: 100 } });
    expect(await rows('crashed')).toHaveLength(200);

    const retried = await handler()(attempt(claimed('crashed', first.recorded()), 0, () => true).a);
    // The second batch is read again and found written: counted as skipped, the data as a clean run left it.
    expect(retried).toEqual({
      imported: { memories: 150, conversations: 0, agents: 0, documents: 0, historyEvents: 0, blocks: 0 },
      skipped: 100,
      errors: [{ line: 252, message: 'not valid JSON: boom' }],
      errorCount: 1,
    });
    expect(await rows('crashed')).toEqual(await rows('clean'));
  });
});
