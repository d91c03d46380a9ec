import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { queryRows } from '../../src/db/query-rows.js';
import { createApp, createTestContext } from './http-test-context.js';

const header = JSON.stringify({ type: 'header', format: 'memrag.export', version: 1, exportedAt: '2026-11-27T00:00:00.000Z', scope: {} });
const BAD_LINES = 4_000;

describe('an import job of a file of invalid lines', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await createTestContext({ JOB_POLL_MS: '20' });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  const get = async (path: string) => {
    const res = await app.request(path);
    return { status: res.status, text: await res.text() };
  };

  it('stores a small result: the first 100 errors with their lines, and a count of all', async () => {
    // Each line long, as a file padded to the upload limit would be: the result must not grow with it.
    const bad = (i: number) => `{"type":"memory","content":"${'x'.repeat(200)}" broken ${i}`;
    const file = [header, ...Array.from({ length: BAD_LINES }, (_, i) => bad(i))].join('\n');
    const res = await app.request('/v1/import', { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: file });
    expect(res.status).toBe(202);
    const { job: queued } = (await res.json()) as { job: { id: string } };

    let job: Record<string, any> = {};
    let text = '';
    for (let i = 0; i < 3_000 && !['succeeded', 'failed'].includes(job.status); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 20));
      ({ text } = await get(`/v1/jobs/${queued.id}`));
      job = (JSON.parse(text) as { job: Record<string, any> }).job;
    }
    expect(job.status).toBe('succeeded');
    expect(job.result.errorCount).toBe(BAD_LINES);
    expect(job.result.errors).toHaveLength(100);
    // The first lines of the file, in order (line 1 is the header).
    expect(job.result.errors.map((e: { line: number }) => e.line)).toEqual(Array.from({ length: 100 }, (_, i) => i + 2));
    expect(job.result.errors[0].message).toContain('not valid JSON');
    // The file is ~850 KB; 100 errors stay well under a fiftieth of it, and so does every listing of jobs.
    expect(file.length).toBeGreaterThan(800_000);
    expect(text.length).toBeLessThan(file.length / 50);
    const listing = await get('/v1/jobs?kind=import');
    expect(listing.status).toBe(200);
    expect(listing.text.length).toBeLessThan(file.length / 50);

    const [stored] = await queryRows<{ result: number; progress: number }>(
      ctx.database.db,
      sql`SELECT length(result::text) AS result, length(progress::text) AS progress FROM jobs WHERE id = ${queued.id}`,
    );
    expect(Number(stored!.result)).toBeLessThan(file.length / 50);
    expect(Number(stored!.progress)).toBeLessThan(1_000);
  });
});
