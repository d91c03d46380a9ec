import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { metricsRegistry } from '../../src/observability/metrics.js';
import { parseSse } from '../support/parse-sse.js';
import { call, createApp, createTestContext } from './http-test-context.js';

const TEXT = '# Glazes\n\nCeladon is a green glaze coloured by iron.\n\n## Tenmoku\n\nTenmoku breaks brown where it thins.';

async function settled(app: Hono, id: string, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const res = await call(app, 'GET', `/v1/jobs/${id}`);
    if (['succeeded', 'failed', 'cancelled'].includes(res.body.job.status)) return res.body.job;
    if (Date.now() > until) throw new Error(`job ${id} still ${res.body.job.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('jobs over HTTP', () => {
  let ctx: AppContext;
  let app: Hono;
  let site: Server;
  let siteUrl: string;
  beforeAll(async () => {
    ctx = await createTestContext({ SYNC_INGEST_MAX_BYTES: '2000', JOB_POLL_MS: '20', INGEST_ALLOW_PRIVATE_URLS: 'true', JOB_RETRY_BASE_MS: '10' });
    app = createApp(ctx);
    site = createServer((req, res) => {
      if (req.url === '/page.md') return res.writeHead(200, { 'content-type': 'text/markdown' }).end('# Raku\n\nRaku ware is pulled from the kiln red hot.');
      if (req.url === '/page2.md')
        return res.writeHead(200, { 'content-type': 'text/markdown; charset=utf-8' }).end('# Saggar\n\nA saggar shields pots from the flame.');
      if (req.url === '/moved') return res.writeHead(302, { location: '/page2.md' }).end();
      if (req.url === '/image') return res.writeHead(200, { 'content-type': 'image/png' }).end('png');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await ctx?.close();
    await new Promise((r) => site?.close(r));
  });

  it('answers 202 {job} with Location for `async: true`, and the job ends with the document, searchable', async () => {
    const res = await call(app, 'POST', '/v1/documents', { text: TEXT, format: 'markdown', title: 'Glazes', async: true });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/v1/jobs/${res.body.job.id}`);
    expect(res.body.job).toMatchObject({ kind: 'ingest', status: 'queued', progress: { stage: 'queued' }, result: null, error: null });
    const job = await settled(app, res.body.job.id);
    expect(job).toMatchObject({ status: 'succeeded', result: { status: 'created' }, progress: { stage: 'write' } });
    expect(job.startedAt && job.finishedAt).toBeTruthy();
    const document = await call(app, 'GET', `/v1/documents/${job.result.documentId}`);
    expect(document.body.document.title).toBe('Glazes');
    const search = await call(app, 'POST', '/v1/search', { query: 'celadon iron glaze', mode: 'text' });
    expect(search.body.hits[0].documentId).toBe(job.result.documentId);
  });

  it('takes `Prefer: respond-async` too, and keeps the synchronous reply without it', async () => {
    const res = await app.request('/v1/documents', {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ text: 'Shino glaze crawls and pits.' }),
    });
    expect(res.status).toBe(202);
    const sync = await call(app, 'POST', '/v1/documents', { text: 'Ash glaze runs.' });
    expect(sync.status).toBe(201);
    expect(sync.body.status).toBe('created');
  });

  it('refuses a synchronous ingest too large for the request with 413 use_async, and takes it async', async () => {
    const big = 'Wedging clay removes air bubbles. '.repeat(100);
    const res = await call(app, 'POST', '/v1/documents', { text: big });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('use_async');
    expect(res.body.error.message).toContain('async');
    const form = new FormData();
    form.append('file', new File([big], 'big.txt', { type: 'text/plain' }));
    const upload = await app.request('/v1/documents', { method: 'POST', body: form });
    expect(upload.status).toBe(413);
    const asyncForm = new FormData();
    asyncForm.append('file', new File([big], 'big.txt', { type: 'text/plain' }));
    asyncForm.append('async', 'true');
    const queued = await app.request('/v1/documents', { method: 'POST', body: asyncForm });
    expect(queued.status).toBe(202);
    const job = await settled(app, ((await queued.json()) as any).job.id);
    expect(job.status).toBe('succeeded');
  });

  it('makes one batch job of several files, with per-item status: one bad file fails alone', async () => {
    const form = new FormData();
    form.append('file', new File(['Bisque firing comes first.'], 'a.txt', { type: 'text/plain' }));
    form.append('file', new File(['%PDF-1.7 broken'], 'b.pdf', { type: 'application/pdf' }));
    form.append('file', new File(['# Slip\n\nSlip is liquid clay.'], 'c.md', { type: 'text/markdown' }));
    form.append('tags', 'batch-test');
    const res = await app.request('/v1/documents', { method: 'POST', body: form });
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as any;
    expect(job.kind).toBe('batch');
    const done = await settled(app, job.id);
    expect(done.counts).toEqual({ queued: 0, running: 0, succeeded: 2, failed: 1, cancelled: 0 });
    expect(done.items.map((i: any) => i.status)).toEqual(['succeeded', 'failed', 'succeeded']);
    expect(done.items[1].error.code).toBe('invalid_document');
    const item = await call(app, 'GET', `/v1/jobs/${done.items[0].id}`);
    expect(item.body.job.batchId).toBe(job.id);
  });

  it('makes one batch job of `{documents: [...]}`', async () => {
    const res = await call(app, 'POST', '/v1/documents', { documents: [{ text: 'Coil pots are built from ropes of clay.' }, { url: `${siteUrl}/page.md` }] });
    expect(res.status).toBe(202);
    const done = await settled(app, res.body.job.id);
    expect(done.counts.succeeded).toBe(2);
  });

  it('fetches a `{url}` source on the worker, following redirects, and refuses other content types', async () => {
    const res = await call(app, 'POST', '/v1/documents', { url: `${siteUrl}/moved`, tags: ['web'] });
    expect(res.status).toBe(202);
    const job = await settled(app, res.body.job.id);
    expect(job).toMatchObject({ status: 'succeeded' });
    const document = await call(app, 'GET', `/v1/documents/${job.result.documentId}`);
    expect(document.body.document).toMatchObject({ format: 'markdown', source: `${siteUrl}/moved`, tags: ['web'], title: 'page2' });
    const image = await settled(app, (await call(app, 'POST', '/v1/documents', { url: `${siteUrl}/image` })).body.job.id);
    expect(image).toMatchObject({ status: 'failed', error: { code: 'unsupported_media_type' } });
  });

  it('validates the new inputs at the edge, naming the field', async () => {
    const url = await call(app, 'POST', '/v1/documents', { url: 'ftp://example.com/x' });
    expect(url.status).toBe(400);
    expect(JSON.stringify(url.body.error.details)).toContain('url');
    const batch = await call(app, 'POST', '/v1/documents', { documents: [] });
    expect(batch.status).toBe(400);
    expect(JSON.stringify(batch.body.error.details)).toContain('documents');
    const flag = await call(app, 'POST', '/v1/documents', { text: 'x', async: 'yes' });
    expect(flag.status).toBe(400);
    expect(JSON.stringify(flag.body.error.details)).toContain('async');
    expect((await call(app, 'GET', '/v1/jobs?status=done')).status).toBe(400);
    expect((await call(app, 'GET', '/v1/jobs/not-a-uuid')).status).toBe(400);
    expect((await call(app, 'GET', '/v1/jobs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('lists by kind, and refuses a kind that is not a tenant job kind with 400 naming the field', async () => {
    const batch = await call(app, 'POST', '/v1/documents', {
      documents: [{ text: 'Bisque firing hardens the clay.' }, { text: 'Glaze firing melts the glaze.' }],
    });
    expect(batch.status).toBe(202);
    const batches = await call(app, 'GET', '/v1/jobs?kind=batch&limit=100');
    expect(batches.status).toBe(200);
    expect(batches.body.items.map((j: any) => j.id)).toContain(batch.body.job.id);
    expect(batches.body.items.every((j: any) => j.kind === 'batch')).toBe(true);
    const ingests = await call(app, 'GET', '/v1/jobs?kind=ingest&limit=100');
    expect(ingests.body.items.length).toBeGreaterThan(2);
    expect(ingests.body.items.every((j: any) => j.kind === 'ingest')).toBe(true);
    // Chat turns' fact extractions are the tenant's too (test/memory/extraction/extraction-job.test.ts has them).
    const extractions = await call(app, 'GET', '/v1/jobs?kind=extraction&status=failed');
    expect(extractions).toMatchObject({ status: 200, body: { items: [], nextCursor: null } });
    const both = await call(app, 'GET', '/v1/jobs?kind=batch&status=queued');
    expect(both.body.items.every((j: any) => j.kind === 'batch' && j.status === 'queued')).toBe(true);
    // The store's own jobs (backfill, reembed) are no tenant's.
    for (const kind of ['backfill', 'reembed', 'nope']) {
      const bad = await call(app, 'GET', `/v1/jobs?kind=${kind}`);
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body.error.details)).toContain('kind');
    }
  });

  it('runs a failed job again on retry, reopening its batch; refuses one that has not failed or lost its input with 409', async () => {
    let served = 0;
    const flaky = createServer((_req, res) => {
      served += 1;
      if (served <= 2) return res.writeHead(200, { 'content-type': 'image/png' }).end('png');
      res.writeHead(200, { 'content-type': 'text/markdown' }).end('# Terra sigillata\n\nA slip burnished to a shine.');
    });
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/doc`;
      const failed = await settled(app, (await call(app, 'POST', '/v1/documents', { url })).body.job.id);
      expect(failed).toMatchObject({ status: 'failed', attempt: 1, error: { code: 'unsupported_media_type' } });

      // A batch whose URL item failed: retrying the item opens the batch until the item ends again.
      const batch = await settled(app, (await call(app, 'POST', '/v1/documents', { documents: [{ url }, { text: 'Burnishing polishes clay.' }] })).body.job.id);
      expect(batch.counts).toMatchObject({ succeeded: 1, failed: 1 });
      const item = batch.items.find((i: any) => i.status === 'failed');

      const retried = await call(app, 'POST', `/v1/jobs/${failed.id}/retry`);
      expect(retried.status).toBe(200);
      expect(retried.body.job).toMatchObject({ id: failed.id, status: 'queued', attempt: 0, finishedAt: null });
      const done = await settled(app, failed.id);
      expect(done).toMatchObject({ status: 'succeeded', attempt: 1, error: null });
      expect((await call(app, 'GET', `/v1/documents/${done.result.documentId}`)).body.document.source).toBe(url);

      expect((await call(app, 'POST', `/v1/jobs/${item.id}/retry`)).status).toBe(200);
      const reopened = await call(app, 'GET', `/v1/jobs/${batch.id}`);
      expect(['queued', 'running']).toContain(reopened.body.job.status);
      expect(reopened.body.job.finishedAt).toBeNull();
      const again = await settled(app, batch.id);
      expect(again).toMatchObject({ status: 'succeeded', counts: { succeeded: 2, failed: 0 } });

      const notFailed = await call(app, 'POST', `/v1/jobs/${failed.id}/retry`);
      expect(notFailed).toMatchObject({ status: 409, body: { error: { code: 'job_not_failed' } } });
      expect((await call(app, 'POST', `/v1/jobs/${batch.id}/retry`)).body.error.code).toBe('job_not_failed');
    } finally {
      await new Promise((r) => flaky.close(r));
    }
    // A corrupt upload's bytes are dropped when it fails: there is nothing to run again.
    const form = new FormData();
    form.append('file', new File(['%PDF-1.7 broken'], 'broken.pdf', { type: 'application/pdf' }));
    form.append('async', 'true');
    const corrupt = await settled(app, ((await (await app.request('/v1/documents', { method: 'POST', body: form })).json()) as any).job.id);
    expect(corrupt.status).toBe('failed');
    expect(await call(app, 'POST', `/v1/jobs/${corrupt.id}/retry`)).toMatchObject({ status: 409, body: { error: { code: 'job_input_gone' } } });
    expect((await call(app, 'POST', '/v1/jobs/00000000-0000-4000-8000-000000000000/retry')).status).toBe(404);
    expect((await call(app, 'POST', '/v1/jobs/nope/retry')).status).toBe(400);
  });

  it('streams progress as SSE with ids, to the final status; Last-Event-ID skips what was seen', async () => {
    const res = await call(app, 'POST', '/v1/documents', { text: `${TEXT}\n\nMore text about kilns.`, format: 'markdown', async: true });
    const stream = await app.request(`/v1/jobs/${res.body.job.id}/events`);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await stream.text());
    const last = events[events.length - 1]!;
    expect(last.event).toBe('succeeded');
    expect(last.data.job.result.documentId).toBeTruthy();
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const again = parseSse(await (await app.request(`/v1/jobs/${res.body.job.id}/events`, { headers: { 'last-event-id': String(last.id) } })).text());
    expect(again.map((e) => e.event)).toEqual(['succeeded']);
  });

  it('cancels a queued job (compare-and-set): it never runs, and cancelling again is 409', async () => {
    await ctx.jobQueue.runner!.stop();
    try {
      const res = await call(app, 'POST', '/v1/documents', { text: 'Never ingested: porcelain.', async: true });
      const cancelled = await call(app, 'POST', `/v1/jobs/${res.body.job.id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.job.status).toBe('cancelled');
      const again = await call(app, 'POST', `/v1/jobs/${res.body.job.id}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('job_ended');
      const listed = await call(app, 'GET', '/v1/jobs?status=cancelled');
      expect(listed.body.items.map((j: any) => j.id)).toContain(res.body.job.id);
      const queuedList = await call(app, 'GET', '/v1/jobs?status=succeeded&limit=2');
      expect(queuedList.body.items.every((j: any) => j.status === 'succeeded')).toBe(true);
      expect(queuedList.body.nextCursor).not.toBeNull();
    } finally {
      // The context's runner is stopped for good: later tests of this file must not need it.
    }
  });

  it('shows the queue in /metrics', async () => {
    const text = await metricsRegistry.metrics();
    expect(text).toMatch(/memrag_job_queue_depth\{status="queued"\} \d+/);
    expect(text).toMatch(/memrag_job_duration_seconds_count\{kind="ingest",outcome="succeeded"\} [1-9]/);
    expect(text).toMatch(/memrag_job_failures_total\{kind="ingest",retried="false",code="invalid_document"\} [1-9]/);
  });
});

describe('URL sources without INGEST_ALLOW_PRIVATE_URLS', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await createTestContext({ JOB_POLL_MS: '20' });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  it('refuses loopback, private, link-local and metadata addresses, by name after DNS and as literals', async () => {
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost:9/x',
      'http://169.254.169.254/latest/meta-data',
      'http://10.1.2.3/x',
      'http://[::1]:9/x',
      'http://[::ffff:127.0.0.1]/x',
    ]) {
      const res = await call(app, 'POST', '/v1/documents', { url });
      expect(res.status).toBe(202);
      const job = await settled(app, res.body.job.id);
      expect(job, url).toMatchObject({ status: 'failed', error: { code: 'url_refused' } });
      expect(job.attempt, url).toBe(1);
    }
  });
});
