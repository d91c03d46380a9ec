import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { describeError } from '../../src/api/error-mapping.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { queryRows } from '../../src/db/query-rows.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { type DocumentValidator, documentValidator } from './openapi/document-validator.js';
import { type JsonReply, createApp } from './http-test-context.js';

const ALPHA_KEY = 'alpha-portability-key-0123456789';
const BETA_KEY = 'beta-portability-key-0123456789';
const NONE = { memories: 0, conversations: 0, agents: 0, documents: 0, historyEvents: 0, blocks: 0 };

describeOnDrivers('POST /v1/import as a job', (driver) => {
  let ctx: AppContext;
  let app: Hono;
  let release: (() => Promise<void>) | undefined;
  let validator: DocumentValidator;
  // Slow enough that a poll sees the job between batches; calls `failFrom` to `failTo` fail (an outage).
  const hash = createHashEmbedder(64);
  const embedder = {
    ...hash,
    id: hash.id,
    calls: 0,
    failFrom: 0,
    failTo: 0,
    async embed(texts: string[]) {
      embedder.calls += 1;
      if (embedder.calls >= embedder.failFrom && embedder.calls <= embedder.failTo) throw new Error('the embedder is unavailable (injected)');
      await new Promise((r) => setTimeout(r, 40));
      return hash.embed(texts);
    },
  };

  const send = async (key: string, method: string, path: string, body?: string): Promise<JsonReply> => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/x-ndjson';
    const res = await app.request(path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: res.headers.get('content-type')?.includes('application/json') && text ? JSON.parse(text) : text };
  };
  const settled = async (key: string, id: string, seen: Array<Record<string, any>> = []) => {
    const until = Date.now() + 30_000;
    for (;;) {
      const res = await send(key, 'GET', `/v1/jobs/${id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(res.body.job);
      if (['succeeded', 'failed', 'cancelled'].includes(res.body.job.status)) return res.body.job;
      if (Date.now() > until) throw new Error(`job ${id} still ${res.body.job.status}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const header = JSON.stringify({ type: 'header', format: 'memrag.export', version: 1, exportedAt: '2026-11-27T00:00:00.000Z', scope: {} });
  const memoryLine = (userId: string, i: number) =>
    JSON.stringify({
      type: 'memory',
      id: randomUUID(),
      agentId: 'default',
      userId,
      key: `fact-${String(i).padStart(4, '0')}`,
      content: `${userId} fact number ${i} about gardens and rivers`,
      tags: ['bulk'],
      metadata: { i },
      sources: [],
      validFrom: null,
      validUntil: null,
      validTo: null,
      expiresAt: null,
      createdAt: '2024-01-01T00:00:00.000Z',
      updatedAt: '2024-01-01T00:00:00.000Z',
      history: [],
    });
  const fileOf = (userId: string, n: number) => [header, ...Array.from({ length: n }, (_, i) => memoryLine(userId, i))].join('\n');
  const importJobs = async (key: string) => (await send(key, 'GET', '/v1/jobs?kind=import&limit=100')).body.items.length as number;
  const countMemories = async (tenantId: string, userId: string) =>
    Number(
      (await queryRows<{ n: number }>(ctx.database.db, sql`SELECT count(*) AS n FROM memories WHERE tenant_id = ${tenantId} AND user_id = ${userId}`))[0]!.n,
    );

  beforeAll(async () => {
    const opened = await driver.provision();
    release = () => opened.release();
    const config = loadConfig({
      ...opened.env,
      LOG_LEVEL: 'silent',
      MEMORY_EXTRACTION: 'off',
      API_KEYS: `alpha:${ALPHA_KEY},beta:${BETA_KEY}`,
      JOB_POLL_MS: '20',
      JOB_RETRY_BASE_MS: '10',
    });
    ctx = await createAppContext(config, { embedder, describeError });
    app = createApp(ctx);
    validator = documentValidator((await (await app.request('/openapi.json')).json()) as Record<string, unknown>);
  });
  afterAll(async () => {
    await ctx?.close();
    await release?.();
  });

  it('answers 202 {job} with Location for async=true; the job imports in batches with progress, and again changes nothing', async () => {
    const file = fileOf('gina', 250);
    const res = await send(ALPHA_KEY, 'POST', '/v1/import?async=true', file);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(validator.response('POST', '/v1/import', 202, 'application/json')(res.body)).toBe(true);
    expect(res.headers.get('location')).toBe(`/v1/jobs/${res.body.job.id}`);
    expect(res.body.job).toMatchObject({ kind: 'import', status: 'queued', progress: { stage: 'queued' }, result: null });

    const seen: Array<Record<string, any>> = [];
    const job = await settled(ALPHA_KEY, res.body.job.id, seen);
    const report = { imported: { ...NONE, memories: 250 }, skipped: 0, errors: [] };
    expect(job).toMatchObject({ status: 'succeeded', result: report, progress: { stage: 'import', done: 250, total: 250, skipped: 0, errors: 0 } });
    expect(validator.response('GET', '/v1/jobs/{id}', 200, 'application/json')({ job })).toBe(true);
    // Seen between batches: items done of the total, with the counts so far.
    const between = seen.find((j) => j.progress.stage === 'import' && j.progress.done > 0 && j.progress.done < 250);
    expect(between, JSON.stringify(seen.map((j) => j.progress))).toBeDefined();
    expect(between!.progress.imported.memories).toBe(between!.progress.done);
    expect(await countMemories('alpha', 'gina')).toBe(250);
    const search = await app.request('/v1/memories/search', {
      method: 'POST',
      headers: { authorization: `Bearer ${ALPHA_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'gina fact number 17', userId: 'gina', mode: 'text', topK: 1 }),
    });
    expect(((await search.json()) as { hits: Array<{ memory: { key: string } }> }).hits[0]!.memory.key).toBe('fact-0017');

    const before = (await send(ALPHA_KEY, 'GET', '/v1/export?userId=gina')).body as string;
    const again = await send(ALPHA_KEY, 'POST', '/v1/import?async=true', file);
    expect(again.status).toBe(202);
    expect((await settled(ALPHA_KEY, again.body.job.id)).result).toEqual({ imported: NONE, skipped: 250, errors: [], errorCount: 0 });
    const after = (await send(ALPHA_KEY, 'GET', '/v1/export?userId=gina')).body as string;
    expect(after.split('\n').slice(1)).toEqual(before.split('\n').slice(1));
  });

  it('imports into the posting tenant only', async () => {
    const res = await send(BETA_KEY, 'POST', '/v1/import?async=true', fileOf('hugo', 30));
    expect(res.status).toBe(202);
    expect((await send(ALPHA_KEY, 'GET', `/v1/jobs/${res.body.job.id}`)).status).toBe(404);
    expect((await settled(BETA_KEY, res.body.job.id)).result).toMatchObject({ imported: { memories: 30 } });
    expect(await countMemories('beta', 'hugo')).toBe(30);
    expect(await countMemories('alpha', 'hugo')).toBe(0);
  });

  it('resumes a job whose attempt failed mid-way after its last recorded batch, with the same report', async () => {
    // Each batch's texts are embedded while the batch before is written: calls 1 and 2 embed batches
    // 1 (ahead) and 0, call 3 batch 2 ahead, call 4 batch 3 ahead. The outage fails 3 and 4, and
    // call 5, batch 2 embedded again in its turn: the attempt fails after two batches.
    embedder.calls = 0;
    embedder.failFrom = 3;
    embedder.failTo = 5;
    const res = await send(ALPHA_KEY, 'POST', '/v1/import?async=true', fileOf('ivan', 450));
    expect(res.status).toBe(202);
    const job = await settled(ALPHA_KEY, res.body.job.id);
    embedder.failFrom = embedder.failTo = 0;
    expect(job).toMatchObject({ status: 'succeeded', attempt: 2, error: null });
    // Exact counts: the two batches written before the failure are not imported again (nor counted as skipped).
    expect(job.result).toEqual({ imported: { ...NONE, memories: 450 }, skipped: 0, errors: [], errorCount: 0 });
    // The second attempt: batch 3 ahead, batch 2, batch 4 ahead.
    expect(embedder.calls).toBe(8);
    expect(await countMemories('alpha', 'ivan')).toBe(450);
  });

  it('queues a file past 1,000 records unless async=false, and reports refused lines in the result', async () => {
    const file = [header, ...Array.from({ length: 1_001 }, () => JSON.stringify({ type: 'photo' }))].join('\n');
    const queued = await send(ALPHA_KEY, 'POST', '/v1/import', file);
    expect(queued.status).toBe(202);
    const job = await settled(ALPHA_KEY, queued.body.job.id);
    expect(job.result.errors).toHaveLength(100);
    expect(job.result.errorCount).toBe(1_001);
    expect(job.result.errors[0]).toEqual({ line: 2, message: expect.stringContaining('unknown record type "photo"') });
    const sync = await send(ALPHA_KEY, 'POST', '/v1/import?async=false', file);
    expect(sync.status).toBe(200);
    expect(sync.body.errors).toHaveLength(1_001);
    expect({ ...sync.body, errors: sync.body.errors.slice(0, 100), errorCount: 1_001 }).toEqual(job.result);
    // A small file stays synchronous.
    expect((await send(ALPHA_KEY, 'POST', '/v1/import', fileOf('jan', 3))).body).toEqual({ imported: { ...NONE, memories: 3 }, skipped: 0, errors: [] });
  });

  it('takes Mem0 memories as a job too', async () => {
    const fixture = readFileSync(new URL('../fixtures/mem0/mem0-export.json', import.meta.url), 'utf8');
    const res = await app.request('/v1/import?format=mem0&async=true', {
      method: 'POST',
      headers: { authorization: `Bearer ${BETA_KEY}`, 'content-type': 'application/json' },
      body: fixture,
    });
    expect(res.status).toBe(202);
    const job = await settled(BETA_KEY, ((await res.json()) as { job: { id: string } }).job.id);
    expect(job.result).toEqual({
      imported: { ...NONE, memories: 2, historyEvents: 2 },
      skipped: 0,
      errors: [{ line: 3, message: expect.stringContaining('memory') }],
      errorCount: 1,
    });
  });

  it('refuses bad input with a 400 before any job is queued, and answers atomic=true with refused lines at once', async () => {
    const jobs = await importJobs(ALPHA_KEY);
    const wrongHeader = await send(ALPHA_KEY, 'POST', '/v1/import?async=true', fileOf('kim', 3).replace('memrag.export', 'other.export'));
    expect(wrongHeader.status).toBe(400);
    expect(wrongHeader.body.error.details).toEqual([{ path: 'header.format', message: expect.stringContaining('other.export') }]);
    expect((await send(ALPHA_KEY, 'POST', '/v1/import?async=true', memoryLine('kim', 1))).status).toBe(400);
    expect((await send(ALPHA_KEY, 'POST', '/v1/import?async=maybe', fileOf('kim', 3))).status).toBe(400);
    const atomic = await send(ALPHA_KEY, 'POST', '/v1/import?async=true&atomic=true', `${fileOf('kim', 3)}\n{not json`);
    expect(atomic.status).toBe(200);
    expect(atomic.body).toEqual({ imported: NONE, skipped: 0, errors: [{ line: 5, message: expect.stringContaining('not valid JSON') }] });
    expect(await countMemories('alpha', 'kim')).toBe(0);
    expect(await importJobs(ALPHA_KEY)).toBe(jobs);
  });
});
