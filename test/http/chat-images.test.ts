import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { queryRows } from '../../src/db/query-rows.js';
import { type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, call, clearConversations, createTestContext } from './http-test-context.js';

/** Images in `/v1/chat` messages: sent to the model as image parts, kept by the conversation once per hash, served back. */
let ctx: AppContext;
let server: ScriptedLlmServer | undefined;

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
/** A distinct PNG per `n` (bytes after IEND do not make it less of one). */
const png = (n: number) => Buffer.concat([PNG, Buffer.from([n])]);
const dataUrl = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;
const parts = (text: string, ...urls: string[]) => [{ type: 'text', text }, ...urls.map((url) => ({ type: 'image_url', image_url: { url } }))];

type WirePart = { type: string; text?: string; image_url?: { url: string; detail?: string } };
type WireMessage = { role: string; content: string | WirePart[] | null };
const messagesOf = (llm: ScriptedLlmServer, i: number) => llm.requests[i]!.body.messages as WireMessage[];
const imageUrlsOf = (m: WireMessage) => (Array.isArray(m.content) ? m.content.flatMap((p) => (p.type === 'image_url' ? [p.image_url!.url] : [])) : []);
const userMessages = (llm: ScriptedLlmServer, i: number) => messagesOf(llm, i).filter((m) => m.role === 'user');

const count = async (table: 'attachments' | 'conversation_attachments' | 'conversations') =>
  Number((await queryRows<{ n: number }>(ctx.database.db, sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)}`))[0]!.n);

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});
beforeEach(async () => {
  await clearConversations(ctx);
  await ctx.database.db.execute(sql`DELETE FROM attachments`);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function withLlm(replies: number): Promise<{ app: Hono; llm: ScriptedLlmServer }> {
  const made = await appWithScriptedLlm(
    ctx,
    Array.from({ length: replies }, (_, i) => reply.text(`Answer ${i + 1}.`)),
  );
  server = made.llm;
  return made;
}

describe('images in a chat message', () => {
  it('reach the model as image parts beside the text, and the stored turn keeps the text alone', async () => {
    const { app, llm } = await withLlm(1);
    const https = 'https://images.example/cat.png';
    const res = await call(app, 'POST', '/v1/chat', { message: parts('What is in this picture?', dataUrl(png(1)), https), userId: 'u1' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const question = userMessages(llm, 0).at(-1)!;
    expect(Array.isArray(question.content)).toBe(true);
    const content = question.content as WirePart[];
    expect(content[0]!.type).toBe('text');
    expect(content[0]!.text).toContain('Question:\nWhat is in this picture?');
    expect(imageUrlsOf(question)).toEqual([dataUrl(png(1)), https]);

    const stored = await call(app, 'GET', `/v1/conversations/${res.body.conversationId}`);
    const user = stored.body.messages.find((m: { role: string }) => m.role === 'user');
    expect(user.content).toBe('What is in this picture?');
    expect(JSON.stringify(user)).not.toContain('base64');
    const [uploaded, referenced] = user.metadata.images;
    expect(uploaded).toMatchObject({ mediaType: 'image/png', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(referenced).toEqual({ url: https });

    const served = await app.request(`/v1/conversations/${res.body.conversationId}/attachments/${uploaded.attachmentId}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(png(1))).toBe(true);
    // Only the text is indexed as the past turn.
    await ctx.backgroundTasks.whenIdle();
    const turns = await queryRows<{ question: string }>(ctx.database.db, sql`SELECT question FROM turns`);
    expect(turns.map((t) => t.question)).toEqual(['What is in this picture?']);
  });

  it('stores an image sent twice once, and serves it from each conversation that carries it', async () => {
    const { app } = await withLlm(3);
    const first = await call(app, 'POST', '/v1/chat', { message: parts('Look', dataUrl(png(7))) });
    const again = await call(app, 'POST', '/v1/chat', { message: parts('Look again', dataUrl(png(7))), conversationId: first.body.conversationId });
    const other = await call(app, 'POST', '/v1/chat', { message: parts('Same picture', dataUrl(png(7))) });
    expect([first.status, again.status, other.status]).toEqual([200, 200, 200]);
    expect(await count('attachments')).toBe(1);
    expect(await count('conversation_attachments')).toBe(2);
    const idOf = async (conversationId: string) =>
      (await call(app, 'GET', `/v1/conversations/${conversationId}`)).body.messages.find((m: { role: string }) => m.role === 'user').metadata.images[0]
        .attachmentId;
    const id = await idOf(first.body.conversationId);
    expect(await idOf(other.body.conversationId)).toBe(id);
    expect((await app.request(`/v1/conversations/${other.body.conversationId}/attachments/${id}`)).status).toBe(200);
  });

  it("sends the last two turns' images again, not older ones", async () => {
    const { app, llm } = await withLlm(4);
    let conversationId: string | undefined;
    for (let turn = 1; turn <= 4; turn += 1) {
      const res = await call(app, 'POST', '/v1/chat', { message: parts(`Picture ${turn}`, dataUrl(png(turn))), ...(conversationId ? { conversationId } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      conversationId = res.body.conversationId;
    }
    const sent = userMessages(llm, 3);
    expect(sent.map(imageUrlsOf)).toEqual([[], [dataUrl(png(2))], [dataUrl(png(3))], [dataUrl(png(4))]]);
    // The older turn's message goes as plain text, as it always did.
    expect(sent[0]!.content).toBe('Picture 1');
  });

  it('refuses what is not an image, too large, too many or of an unknown part type, naming the field and writing nothing', async () => {
    const small = await createTestContext({ IMAGE_MAX_BYTES: '100', IMAGE_MAX_PER_MESSAGE: '2' });
    try {
      const made = await appWithScriptedLlm(small, [reply.text('never')]);
      server = made.llm;
      const refusals: Array<[unknown, string]> = [
        [
          [
            { type: 'text', text: 'Hi' },
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          ],
          'message.1.type',
        ],
        [parts('Hi', dataUrl(Buffer.from('just some text, not a picture'))), 'message.1.image_url.url'],
        [parts('Hi', dataUrl(Buffer.concat([PNG, Buffer.alloc(200)]))), 'message.1.image_url.url'],
        [parts('Hi', dataUrl(png(1)), dataUrl(png(2)), dataUrl(png(3))), 'message.3'],
        [parts('Hi', 'http://insecure.example/a.png'), 'message.1.image_url.url'],
        [[{ type: 'image_url', image_url: { url: dataUrl(png(1)) } }], 'message'],
      ];
      for (const [message, field] of refusals) {
        const res = await call(made.app, 'POST', '/v1/chat', { message });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.error.code).toBe('validation_error');
        expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
      }
      expect(made.llm.requests).toHaveLength(0);
      const rows = async (table: string) =>
        Number((await queryRows<{ n: number }>(small.database.db, sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)}`))[0]!.n);
      expect([await rows('conversations'), await rows('attachments'), await rows('runs')]).toEqual([0, 0, 0]);
    } finally {
      await server?.close();
      server = undefined;
      await small.close();
    }
  });

  it('answers 404 for an attachment of another conversation, and for a conversation of another agent', async () => {
    const { app } = await withLlm(2);
    const mine = await call(app, 'POST', '/v1/chat', { message: parts('Mine', dataUrl(png(1))) });
    const other = await call(app, 'POST', '/v1/chat', { message: 'No picture here' });
    const stored = await call(app, 'GET', `/v1/conversations/${mine.body.conversationId}`);
    const id = stored.body.messages[0].metadata.images[0].attachmentId;
    expect((await app.request(`/v1/conversations/${other.body.conversationId}/attachments/${id}`)).status).toBe(404);
    expect((await app.request(`/v1/conversations/${mine.body.conversationId}/attachments/${id}?agentId=someone-else`)).status).toBe(404);
    expect((await app.request(`/v1/conversations/${mine.body.conversationId}/attachments/not-a-uuid`)).status).toBe(400);
  });

  it('goes with its conversation when deleted, unless another conversation keeps it too', async () => {
    const { app } = await withLlm(3);
    const a = await call(app, 'POST', '/v1/chat', { message: parts('Shared', dataUrl(png(1))) });
    const b = await call(app, 'POST', '/v1/chat', { message: parts('Shared and own', dataUrl(png(1)), dataUrl(png(2))) });
    expect(await count('attachments')).toBe(2);
    expect((await call(app, 'DELETE', `/v1/conversations/${b.body.conversationId}`)).status).toBe(204);
    expect(await count('attachments')).toBe(1);
    expect((await call(app, 'DELETE', `/v1/conversations/${a.body.conversationId}`)).status).toBe(204);
    expect(await count('attachments')).toBe(0);
  });

  it("goes with the user's erasure, counted", async () => {
    const { app } = await withLlm(2);
    await call(app, 'POST', '/v1/chat', { message: parts('Mine', dataUrl(png(1))), userId: 'erased-user' });
    await call(app, 'POST', '/v1/chat', { message: parts('Kept', dataUrl(png(2))), userId: 'kept-user' });
    await ctx.backgroundTasks.whenIdle();
    const res = await call(app, 'DELETE', '/v1/users/erased-user');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.erased).toMatchObject({ conversations: 1, attachments: 1 });
    expect(await count('attachments')).toBe(1);
  });
});
