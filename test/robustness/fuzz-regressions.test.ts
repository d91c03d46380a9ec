import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { call, createApp, createTestContext } from '../http/http-test-context.js';
import { conversationExport } from './support/route-bases.js';

/** What route-fuzz.test.ts found, each pinned by the request that found it. */
describe('fuzz regressions', () => {
  let ctx: AppContext;
  let app: Hono;

  beforeAll(async () => {
    // The 9,000-turn import indexes every turn in its request: 25-34 s on PGlite on two cores, past
    // the default 30 s request timeout on a slow run. What it pins is the bind limit, not the pace.
    ctx = await createTestContext({ REQUEST_TIMEOUT_MS: '110000' });
    app = createApp(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const upload = (name: string, text: string) => {
    const form = new FormData();
    form.append('file', new File([text], name, { type: 'text/plain' }));
    return app.request('/v1/documents', { method: 'POST', body: form });
  };

  it('a multipart upload whose file name holds a NUL character is a 400 naming file, not a 500', async () => {
    // The name became the default title, and Postgres refused the NUL inside the insert.
    const res = await upload('a\u0000.txt', 'Green tea is steamed.');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe('validation_error');
    expect(body.error.details.map((d) => d.path)).toEqual(['file']);
    expect(((await (await app.request('/v1/documents')).json()) as { items: unknown[] }).items).toEqual([]);
    // Other odd names are data.
    expect((await upload('\u202Etxt.😀 ../x.txt', 'Green tea is steamed.')).status).toBe(201);
  });

  it('a conversation import with more checkpoints than one INSERT can bind (65,535 parameters) failed', async () => {
    // One turn per message and a checkpoint for each: 8 parameters a checkpoint, past the limit at 8,192.
    const turns = 9_000;
    const exported = {
      ...conversationExport(),
      messages: Array.from({ length: turns }, (_, i) => ({ seq: i + 1, turn: i + 1, role: 'user', content: `question ${i}` })),
      checkpoints: Array.from({ length: turns }, (_, i) => ({
        turn: i + 1,
        firstSeq: i + 1,
        lastSeq: i + 1,
        question: `question ${i}`,
        summary: 'asked',
        actionableSummary: 'none',
        source: 'rules',
      })),
    };
    const imported = await call(app, 'POST', '/v1/conversations/import', exported);
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const back = await call(app, 'GET', `/v1/conversations/${imported.body.conversation.id}/export`);
    expect(back.body.checkpoints).toHaveLength(turns);
  });
});
