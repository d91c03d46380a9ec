import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { queryRows } from '../../src/db/query-rows.js';
import { sweepRuns } from '../../src/runs/run-sweeper.js';
import { type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, call, createTestContext } from './http-test-context.js';

/** A turn's image is stored before the model runs; a turn that then fails, with no user to erase, left it behind forever. */

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const HOUR = 3_600_000;

describe('images of a turn that failed without a user', () => {
  let ctx: AppContext;
  let server: ScriptedLlmServer | undefined;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await ctx?.close();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const attachmentRows = () => queryRows<{ id: string }>(ctx.database.db, sql`SELECT id FROM attachments`);

  it('are deleted by the runs sweep once older than a run lives, while a completed turn keeps its own', async () => {
    const made = await appWithScriptedLlm(ctx, [reply.error(500, { message: 'boom' }), reply.text('A pixel.')]);
    server = made.llm;
    const withImage = (n: number) => ({
      message: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.concat([PNG, Buffer.from([n])]).toString('base64')}` } },
      ],
    });
    const failed = await call(made.app, 'POST', '/v1/chat', withImage(1));
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const done = await call(made.app, 'POST', '/v1/chat', withImage(2));
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
    expect(await attachmentRows()).toHaveLength(2);

    // Within a run's life nothing goes: a turn may still be about to store it.
    expect((await sweepRuns(ctx.database.db, { lostAfterMs: HOUR })).attachments).toBe(0);
    await ctx.database.db.execute(sql`UPDATE attachments SET created_at = now() - interval '2 hours'`);
    expect((await sweepRuns(ctx.database.db, { lostAfterMs: HOUR })).attachments).toBe(1);

    // The completed turn's image is still served from its conversation.
    const stored = await call(made.app, 'GET', `/v1/conversations/${done.body.conversationId}`);
    const question = stored.body.messages.find((m: { role: string }) => m.role === 'user');
    const served = await made.app.request(`/v1/conversations/${done.body.conversationId}/attachments/${question.metadata.images[0].attachmentId}`);
    expect(served.status).toBe(200);
    expect(await attachmentRows()).toEqual([{ id: question.metadata.images[0].attachmentId }]);
  });
});
