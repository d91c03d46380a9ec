import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type JsonReply, call, createApp, createTestContext } from './http-test-context.js';

let ctx: AppContext;
let app: Hono;

const fixture = (name: string) => readFileSync(new URL(`../fixtures/documents/${name}`, import.meta.url));

beforeAll(async () => {
  ctx = await createTestContext();
  app = createApp(ctx);
});
afterAll(async () => {
  await ctx?.close();
});
beforeEach(async () => {
  const rows = (await ctx.database.db.execute(sql`SELECT id::text AS id FROM documents`)) as unknown as { rows: { id: string }[] };
  for (const { id } of rows.rows) await ctx.documents.forTenant('default').delete(id);
});

async function upload(file: { name: string; type?: string; data: Uint8Array | string }, fields: Record<string, string | string[]> = {}): Promise<JsonReply> {
  const form = new FormData();
  form.append('file', new File([file.data], file.name, file.type ? { type: file.type } : {}));
  for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
  const res = await app.request('/v1/documents', { method: 'POST', body: form });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

describe('POST /v1/documents (JSON)', () => {
  it('ingests text, returns 201 with the document, then 200 unchanged for the same text', async () => {
    const created = await call(app, 'POST', '/v1/documents', {
      title: 'Tea notes',
      text: '# Tea\n\nGreen tea is steamed.\n\n## Black\n\nBlack tea is oxidised fully.',
      format: 'markdown',
      tags: ['Tea', 'notes'],
      metadata: { author: 'a' },
      source: 'notes://tea',
      maxTokens: 16,
      overlapTokens: 2,
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('created');
    expect(created.body.document).toMatchObject({
      title: 'Tea notes',
      source: 'notes://tea',
      format: 'markdown',
      tags: ['tea', 'notes'],
      metadata: { author: 'a' },
    });
    expect(created.body.document.chunkCount).toBeGreaterThanOrEqual(2);
    expect(created.headers.get('location')).toBe(`/v1/documents/${created.body.document.id}`);

    const again = await call(app, 'POST', '/v1/documents', { text: '# Tea\n\nGreen tea is steamed.\n\n## Black\n\nBlack tea is oxidised fully.' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'unchanged', document: { id: created.body.document.id } });

    const replaced = await call(app, 'POST', '/v1/documents', { text: 'Oolong is in between.', source: 'notes://tea' });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ status: 'replaced', document: { id: created.body.document.id, chunkCount: 1 } });
  });

  it('answers 400 naming the offending fields', async () => {
    const bad = await call(app, 'POST', '/v1/documents', { text: '', format: 'pdf', maxTokens: 2, overlapTokens: 1, passageTokens: 0, colour: 'red' });
    expect(bad.status).toBe(400);
    const paths = bad.body.error.details.map((d: { path: string }) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['text', 'format', 'maxTokens', 'passageTokens', 'colour']));
    expect(bad.body.error.message).toContain('text');
    const overlap = await call(app, 'POST', '/v1/documents', { text: 'x y z', maxTokens: 16, overlapTokens: 16 });
    expect(overlap.status).toBe(400);
    expect(overlap.body.error.details).toEqual([{ path: 'overlapTokens', message: 'must be less than maxTokens' }]);
    expect((await call(app, 'POST', '/v1/documents', '{not json')).status).toBe(400);
  });

  it('indexes runs of chunks as BM25 passages of passageTokens, one hit per passage', async () => {
    const sentences = Array.from({ length: 12 }, (_, i) => `Sentence ${i} is about kettle number ${i}.`).join(' ');
    const whole = await call(app, 'POST', '/v1/documents', { title: 'Kettles', text: sentences, maxTokens: 16, overlapTokens: 0 });
    const split = await call(app, 'POST', '/v1/documents', {
      title: 'Kettles again',
      text: `${sentences} Again.`,
      maxTokens: 16,
      overlapTokens: 0,
      passageTokens: 1,
    });
    expect(whole.status).toBe(201);
    expect(split.status).toBe(201);
    const hits = async (id: string) => {
      const res = await call(app, 'POST', '/v1/search', { query: 'kettle', mode: 'text', topK: 50 });
      return res.body.hits.filter((h: { documentId: string }) => h.documentId === id);
    };
    // One passage holds the whole short document; one per chunk with passageTokens at most the chunk size.
    expect(await hits(whole.body.document.id)).toHaveLength(1);
    expect(await hits(split.body.document.id)).toHaveLength(split.body.document.chunkCount);
    expect(split.body.document.chunkCount).toBeGreaterThan(2);
  });
});

describe('POST /v1/documents (multipart)', () => {
  it('uploads a Markdown file with fields; the title comes from the file name', async () => {
    const res = await upload(
      { name: 'guide.md', type: 'application/octet-stream', data: fixture('guide.md') },
      { tags: ['docs', 'widgets'], metadata: '{"v":2}', maxTokens: '32' },
    );
    expect(res.status).toBe(201);
    expect(res.body.document).toMatchObject({ title: 'guide', format: 'markdown', tags: ['docs', 'widgets'], metadata: { v: 2 } });
    const chunks = await call(app, 'GET', `/v1/documents/${res.body.document.id}/chunks`);
    expect(chunks.status).toBe(200);
    expect(chunks.body.items.length).toBe(res.body.document.chunkCount);
    expect(chunks.body.items.some((c: { headingPath: string[] }) => c.headingPath.includes('Install'))).toBe(true);
    const text = readFileSync(new URL('../fixtures/documents/guide.md', import.meta.url), 'utf8').trim();
    for (const c of chunks.body.items) expect(text.slice(c.start, c.end)).toBe(c.text);
  });

  it('uploads a PDF and finds its text', async () => {
    const res = await upload(
      { name: 'two-pages.pdf', type: 'application/pdf', data: fixture('two-pages.pdf') },
      { title: 'Q3 report', tags: 'finance,reports' },
    );
    expect(res.status).toBe(201);
    expect(res.body.document).toMatchObject({ title: 'Q3 report', format: 'pdf', tags: ['finance', 'reports'] });
    const search = await call(app, 'POST', '/v1/search', { query: 'revenue growth third quarter', tagsAll: ['finance'] });
    expect(search.status).toBe(200);
    expect(search.body.hits[0]).toMatchObject({ documentId: res.body.document.id, title: 'Q3 report' });
  });

  it('answers 415 for an unsupported file type, 422 for a corrupt or empty one, 400 for bad fields', async () => {
    const docx = await upload({ name: 'report.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', data: 'PK\u0003\u0004' });
    expect(docx.status).toBe(415);
    expect(docx.body.error).toMatchObject({ code: 'unsupported_media_type' });
    expect(docx.body.error.message).toContain('report.docx');

    const corrupt = await upload({ name: 'broken.pdf', data: '%PDF-1.4 this is not really a pdf' });
    expect(corrupt.status).toBe(422);
    expect(corrupt.body.error.code).toBe('unprocessable_document');
    expect(corrupt.body.error.message).toMatch(/PDF/);

    const binary = await upload({ name: 'notes.txt', data: new Uint8Array([0x68, 0x00, 0x69]) });
    expect(binary.status).toBe(422);
    const empty = await upload({ name: 'empty.md', data: '  \n' });
    expect(empty.status).toBe(422);

    const badFields = await upload({ name: 'a.txt', data: 'hello' }, { metadata: '[1', maxTokens: 'many', passageTokens: '1.5', unknown: 'x' });
    expect(badFields.status).toBe(400);
    expect(badFields.body.error.details.map((d: { path: string }) => d.path)).toEqual(
      expect.arrayContaining(['metadata', 'maxTokens', 'passageTokens', 'unknown']),
    );

    const form = new FormData();
    form.append('title', 'no file');
    const noFile = await app.request('/v1/documents', { method: 'POST', body: form });
    expect(noFile.status).toBe(400);
    expect(((await noFile.json()) as { error: { details: { path: string }[] } }).error.details[0]!.path).toBe('file');
    expect(await ctx.documents.forTenant('default').list()).toMatchObject({ items: [] });
  });
});

describe('documents API', () => {
  it('lists with tag filters and pagination, reads, lists chunks, deletes', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call(app, 'POST', '/v1/documents', { text: `Document number ${i} about apples.`, tags: i % 2 ? ['odd'] : ['even'] });
      ids.push(res.body.document.id);
    }
    const odd = await call(app, 'GET', '/v1/documents?tagsAny=odd');
    expect(odd.body.items.map((d: { id: string }) => d.id).sort()).toEqual([ids[1], ids[3]].sort());
    const first = await call(app, 'GET', '/v1/documents?limit=2');
    expect(first.body.items).toHaveLength(2);
    const second = await call(app, 'GET', `/v1/documents?limit=10&cursor=${first.body.nextCursor}`);
    expect(second.body.items).toHaveLength(3);
    expect(second.body.nextCursor).toBeNull();

    const one = await call(app, 'GET', `/v1/documents/${ids[0]}`);
    expect(one.status).toBe(200);
    expect(one.body.document).toMatchObject({ id: ids[0], chunkCount: 1, tags: ['even'] });

    expect((await call(app, 'DELETE', `/v1/documents/${ids[0]}`)).status).toBe(204);
    expect((await call(app, 'GET', `/v1/documents/${ids[0]}`)).status).toBe(404);
    expect((await call(app, 'GET', `/v1/documents/${ids[0]}/chunks`)).status).toBe(404);
    expect((await call(app, 'DELETE', `/v1/documents/${ids[0]}`)).status).toBe(404);
    const badId = await call(app, 'GET', '/v1/documents/not-a-uuid');
    expect(badId.status).toBe(400);
    expect(badId.body.error.details[0].path).toBe('id');
    expect((await call(app, 'GET', '/v1/documents?cursor=garbage')).status).toBe(400);
    expect((await call(app, 'GET', `/v1/documents/${ids[1]}/chunks?cursor=x`)).status).toBe(400);
  });
});

describe('POST /v1/search', () => {
  it('returns hits with citation fields in every mode, filtered by tags', async () => {
    const guide = await call(app, 'POST', '/v1/documents', {
      title: 'Widget guide',
      text: readFileSync(new URL('../fixtures/documents/guide.md', import.meta.url), 'utf8'),
      format: 'markdown',
      tags: ['docs'],
      maxTokens: 24,
    });
    await call(app, 'POST', '/v1/documents', { title: 'Other', text: 'Installing gadgets is a different story entirely.', tags: ['other'] });
    for (const mode of ['hybrid', 'vector', 'text'] as const) {
      for (const reranker of ['none', 'lexical'] as const) {
        const res = await call(app, 'POST', '/v1/search', { query: 'run the installer', topK: 3, mode, reranker, tagsAny: ['docs'] });
        expect(res.status).toBe(200);
        expect(res.body.hits.length).toBeGreaterThan(0);
        for (const hit of res.body.hits) {
          expect(hit).toMatchObject({ documentId: guide.body.document.id, title: 'Widget guide' });
          expect(hit).toHaveProperty('chunkId');
          expect(Array.isArray(hit.headingPath)).toBe(true);
          expect(hit.end).toBeGreaterThan(hit.start);
          expect(typeof hit.snippet).toBe('string');
          expect(typeof hit.score).toBe('number');
        }
      }
    }
    const text = await call(app, 'POST', '/v1/search', { query: 'run the installer', mode: 'text', topK: 1 });
    expect(text.body.hits[0]).toMatchObject({ headingPath: ['Widget Guide', 'Install'] });
    expect(text.body.hits[0].snippet).toContain('installer');
    const none = await call(app, 'POST', '/v1/search', { query: 'installer', tagsNone: ['docs', 'other'] });
    expect(none.body.hits).toEqual([]);
  });

  it('answers 400 for bad search input', async () => {
    const res = await call(app, 'POST', '/v1/search', { query: ' ', topK: 0, mode: 'fuzzy', reranker: 'cross', weights: { vector: 0, text: 0 } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(['query', 'topK', 'mode', 'reranker', 'weights']));
  });
});

describe('chat', () => {
  it('uses the document retriever by default', () => {
    expect(ctx.knowledge).toBe(ctx.search);
  });
});
