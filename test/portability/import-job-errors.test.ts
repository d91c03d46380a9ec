import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import type { ClaimedJob, JobProgress } from '../../src/jobs/job-types.js';
import { IMPORT_JOB_MAX_ERRORS, type ImportItem, type ImportProgress, importJobHandler } from '../../src/portability/import-job.js';
import { exportedMemory } from '../../testkit/exported-memory.js';
import { createTestContext } from '../http/http-test-context.js';

describe('the errors an import job keeps', () => {
  let ctx: AppContext;
  beforeAll(async () => {
    ctx = await createTestContext({ WORKERS_IN_PROCESS: 'false' });
  });
  afterAll(() => ctx?.close());

  // Lines 2-201 are memories, lines 202-251 lines refused on reading.
  const items: ImportItem[] = [
    ...Array.from({ length: 200 }, (_, i) => ({ line: i + 2, record: { type: 'memory' as const, ...exportedMemory('rita', i) } })),
    ...Array.from({ length: 50 }, (_, i) => ({ line: i + 202, error: `not valid JSON: ${i}` })),
  ];
  const claimed = (progress: JobProgress): ClaimedJob => ({
    id: randomUUID(),
    kind: 'import',
    status: 'running',
    progress,
    result: null,
    error: null,
    parentId: null,
    attempt: 2,
    createdAt: new Date().toISOString(),
    startedAt: null,
    finishedAt: null,
    eventSeq: 0,
    tenantId: 'errors',
    payload: { format: 'memrag', items: items.length, contentEncoding: 'text' },
    content: items.map((i) => JSON.stringify(i)).join('\n'),
    maxAttempts: 3,
  });

  it('counts the write errors a resumed attempt no longer holds, and keeps the first 100 by line', async () => {
    // An attempt that died after the memories: 150 of them failed to write, the first 100 kept.
    const writeErrors = Array.from({ length: 150 }, (_, i) => ({ line: i + 2, message: `write failed ${i}` }));
    const resumed: ImportProgress = {
      stage: 'import',
      done: 200,
      total: items.length,
      imported: { memories: 50, conversations: 0, agents: 0, documents: 0, historyEvents: 0, blocks: 0 },
      skipped: 0,
      errors: 150,
      writeErrors: writeErrors.slice(0, IMPORT_JOB_MAX_ERRORS),
      writeErrorCount: 150,
    };
    const reported: JobProgress[] = [];
    const result = await importJobHandler({ db: ctx.database.db, embedder: ctx.embedder, conversations: ctx.conversations, documents: ctx.documents })({
      job: claimed(resumed),
      signal: new AbortController().signal,
      report: (p) => reported.push(p),
      async checkpoint() {},
      async complete() {},
    });
    expect(result).toMatchObject({ imported: { memories: 50 }, errorCount: 200 });
    expect(result.errors).toEqual(writeErrors.slice(0, IMPORT_JOB_MAX_ERRORS));
    expect(reported.at(-1)).toMatchObject({ stage: 'import', done: 250, errors: 200, writeErrorCount: 150 });
    expect((reported.at(-1) as ImportProgress).writeErrors).toHaveLength(IMPORT_JOB_MAX_ERRORS);
  });

  it('counts each write error once when one attempt has more than 100 of them', async () => {
    // Agents whose dates do not read: every one fails to write, line by line.
    const agents = Array.from({ length: 150 }, (_, i) => ({
      line: i + 2,
      record: { type: 'agent', id: `broken-${i}`, version: 1, settings: { name: 'Broken' }, createdAt: 'not a date', updatedAt: 'nope', versions: [] },
    }));
    const job = { ...claimed({ stage: 'import', done: 0, total: agents.length }), attempt: 1, content: agents.map((i) => JSON.stringify(i)).join('\n') };
    const reported: JobProgress[] = [];
    const result = (await importJobHandler({ db: ctx.database.db, embedder: ctx.embedder, conversations: ctx.conversations, documents: ctx.documents })({
      job,
      signal: new AbortController().signal,
      report: (p) => reported.push(p),
      async checkpoint() {},
      async complete() {},
    })) as { errors: unknown[]; errorCount: number };
    expect(result.errorCount).toBe(150);
    expect(result.errors).toHaveLength(IMPORT_JOB_MAX_ERRORS);
    expect(reported.at(-1)).toMatchObject({ errors: 150, writeErrorCount: 150 });
  });
});
