import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillSteps } from '../../src/backfill-steps.js';
import type { Database, Db } from '../../src/db/database.js';
import type { JobAttempt } from '../../src/jobs/job-runner.js';
import { type JobProgress, PermanentJobError } from '../../src/jobs/job-types.js';
import { backfillJobHandler, backfillNeeded } from '../../src/jobs/maintenance-jobs.js';
import { AnalyzerMismatchError } from '../../src/retrieval/analyzer-mismatch-error.js';
import type { BackfillStep } from '../../src/retrieval/backfill-step.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { describeOnDrivers } from '../support/database-drivers.js';

/** A step that records its run and reports the given progress. */
function fakeStep(stage: string, pending: boolean, result: Record<string, unknown>, ran: string[], progress: [number, number][] = []): BackfillStep {
  return {
    stage,
    pending: () => (pending ? sql`true` : sql`false`),
    async run({ report }) {
      ran.push(stage);
      for (const [done, total] of progress) report(done, total);
      return result;
    },
  };
}

/** An attempt whose only used part is `report`; the handler reads nothing else. */
function attempt(reports: JobProgress[]): JobAttempt {
  return { report: (p: JobProgress) => reports.push(p) } as unknown as JobAttempt;
}

describe('backfill job', () => {
  it('runs the steps in the order given, reports each under its own stage, and merges their results', async () => {
    const ran: string[] = [];
    const reports: JobProgress[] = [];
    const handler = backfillJobHandler({
      db: {} as Db,
      steps: [
        fakeStep('first', true, { a: 1 }, ran, [
          [0, 2],
          [2, 2],
        ]),
        fakeStep('second', true, { b: true }, ran, [[0, 1]]),
      ],
    });
    expect(await handler(attempt(reports))).toEqual({ a: 1, b: true });
    expect(ran).toEqual(['first', 'second']);
    expect(reports).toEqual([
      { stage: 'first', done: 0, total: 2 },
      { stage: 'first', done: 2, total: 2 },
      { stage: 'second', done: 0, total: 1 },
    ]);
  });

  it('an analyzer mismatch fails the job for good, since no retry fixes it', async () => {
    const failing: BackfillStep = {
      stage: 'passages',
      pending: () => sql`true`,
      run: async () => {
        throw new AnalyzerMismatchError('english-v1', 'english-v2');
      },
    };
    await expect(backfillJobHandler({ db: {} as Db, steps: [failing] })(attempt([]))).rejects.toBeInstanceOf(PermanentJobError);
  });
});

describeOnDrivers('backfill probe', (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(() => database?.close());

  it('is needed when any one step has work, and not when none has', async () => {
    const ran: string[] = [];
    const idle = fakeStep('idle', false, {}, ran);
    const busy = fakeStep('busy', true, {}, ran);
    expect(await backfillNeeded(database.db, [])).toBe(false);
    expect(await backfillNeeded(database.db, [idle, idle])).toBe(false);
    expect(await backfillNeeded(database.db, [idle, busy])).toBe(true);
    expect(await backfillNeeded(database.db, [busy, idle])).toBe(true);
    expect(ran).toEqual([]);
  });

  it("every feature's step probes its own tables: an empty store needs no backfill, and a document chunked before passages does", async () => {
    const steps = backfillSteps(createHashEmbedder(64));
    expect(steps.map((s) => s.stage)).toEqual(['memories', 'turns', 'passages']);
    expect(await backfillNeeded(database.db, steps)).toBe(false);
    // A document from before passages: only documents' own step sees it.
    await database.db.execute(
      sql`INSERT INTO documents (tenant_id, title, content_hash, format, text) VALUES ('default', 'Old', 'old-hash', 'text', 'Old text')`,
    );
    expect(await backfillNeeded(database.db, steps)).toBe(true);
    expect(
      await backfillNeeded(
        database.db,
        steps.filter((s) => s.stage !== 'passages'),
      ),
    ).toBe(false);
  });
});
