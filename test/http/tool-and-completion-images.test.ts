import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, call, clearConversations, createTestContext } from './http-test-context.js';

/** Images from client tools (tool outputs on runs) and through `/v1/chat/completions`. */
let ctx: AppContext;
let server: ScriptedLlmServer | undefined;

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const PNG_URL = `data:image/png;base64,${PNG.toString('base64')}`;
const JPEG_URL = `data:image/jpeg;base64,${Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46]).toString('base64')}`;

type WireMessage = { role: string; content: unknown; tool_call_id?: string };

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

const CAMERA = { type: 'function', function: { name: 'take_photo', description: 'Takes a photo', parameters: { type: 'object', properties: {} } } };

describe('an image a client tool returns', () => {
  it('goes to the model in a user message after the tool results, and the conversation keeps it', async () => {
    const made = await appWithScriptedLlm(ctx, [reply.toolCalls([{ id: 'cam', name: 'take_photo', arguments: '{}' }]), reply.text('A red square.')]);
    server = made.llm;
    const paused = await call(made.app, 'POST', '/v1/chat', { message: 'What does the camera see?', tools: [CAMERA] });
    expect(paused.body.status, JSON.stringify(paused.body)).toBe('requires_action');
    const output = [
      { type: 'text', text: 'photo taken' },
      { type: 'image_url', image_url: { url: PNG_URL, detail: 'low' } },
    ];
    const done = await call(made.app, 'POST', `/v1/runs/${paused.body.runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'cam', output }] });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', answer: 'A red square.' });

    const sent = made.llm.requests[1]!.body.messages as WireMessage[];
    const toolAt = sent.findIndex((m) => m.role === 'tool');
    expect(sent[toolAt]).toMatchObject({ role: 'tool', tool_call_id: 'cam', content: 'photo taken' });
    expect(sent[toolAt + 1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'The images tool call cam returned:' },
        { type: 'image_url', image_url: { url: PNG_URL, detail: 'low' } },
      ],
    });

    const stored = await call(made.app, 'GET', `/v1/conversations/${done.body.conversationId}`);
    const tool = stored.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(tool.content).toBe('photo taken');
    const served = await made.app.request(`/v1/conversations/${done.body.conversationId}/attachments/${tool.metadata.images[0].attachmentId}`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it("keeps the question's images by reference while the run waits, and sends them again when it resumes", async () => {
    const made = await appWithScriptedLlm(ctx, [reply.toolCalls([{ id: 'cam', name: 'take_photo', arguments: '{}' }]), reply.text('Same picture.')]);
    server = made.llm;
    const paused = await call(made.app, 'POST', '/v1/chat', {
      message: [
        { type: 'text', text: 'Compare with the camera' },
        { type: 'image_url', image_url: { url: PNG_URL } },
      ],
      tools: [CAMERA],
    });
    expect(paused.body.status).toBe('requires_action');
    const state = await ctx.database.db.execute(sql`SELECT state::text AS state FROM runs WHERE id = ${paused.body.runId}`);
    expect(String((state as unknown as { rows: Array<{ state: string }> }).rows[0]!.state)).not.toContain('base64');
    const done = await call(made.app, 'POST', `/v1/runs/${paused.body.runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'cam', output: 'no photo' }] });
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
    const question = (made.llm.requests[1]!.body.messages as WireMessage[]).filter((m) => m.role === 'user').at(-1)!;
    expect(question.content).toEqual([
      { type: 'text', text: expect.stringContaining('Question:\nCompare with the camera') },
      { type: 'image_url', image_url: { url: PNG_URL } },
    ]);
  });

  it('refuses an output image that is not one, naming the field, and leaves the run waiting', async () => {
    const made = await appWithScriptedLlm(ctx, [reply.toolCalls([{ id: 'cam', name: 'take_photo', arguments: '{}' }]), reply.text('never')]);
    server = made.llm;
    const paused = await call(made.app, 'POST', '/v1/chat', { message: 'Look', tools: [CAMERA] });
    const bad = `data:image/png;base64,${Buffer.from('not an image').toString('base64')}`;
    const res = await call(made.app, 'POST', `/v1/runs/${paused.body.runId}/tool-outputs`, {
      toolOutputs: [{ toolCallId: 'cam', output: [{ type: 'image_url', image_url: { url: bad } }] }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual(['toolOutputs.0.output.0.image_url.url']);
    expect((await call(made.app, 'GET', `/v1/runs/${paused.body.runId}`)).body.status).toBe('requires_action');
    expect(made.llm.requests).toHaveLength(1);
  });
});

describe('/v1/chat/completions with image parts', () => {
  it('passes them through to the model, from the question and the history', async () => {
    const made = await appWithScriptedLlm(ctx, [reply.text('Two pictures.')]);
    server = made.llm;
    const res = await call(made.app, 'POST', '/v1/chat/completions', {
      model: 'memrag',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Keep this' },
            { type: 'image_url', image_url: { url: JPEG_URL } },
          ],
        },
        { role: 'assistant', content: 'Kept.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And this one?' },
            { type: 'image_url', image_url: { url: 'https://images.example/b.png', detail: 'high' } },
          ],
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const users = (made.llm.requests[0]!.body.messages as WireMessage[]).filter((m) => m.role === 'user');
    expect(users[0]!.content).toEqual([
      { type: 'text', text: 'Keep this' },
      { type: 'image_url', image_url: { url: JPEG_URL } },
    ]);
    expect(users[1]!.content).toEqual([
      { type: 'text', text: expect.stringContaining('Question:\nAnd this one?') },
      { type: 'image_url', image_url: { url: 'https://images.example/b.png', detail: 'high' } },
    ]);
  });

  it('refuses a data URL that is not an image, and images outside user messages', async () => {
    const made = await appWithScriptedLlm(ctx, [reply.text('never')]);
    server = made.llm;
    const bad = `data:image/gif;base64,${Buffer.from('GIF? no').toString('base64')}`;
    const notImage = await call(made.app, 'POST', '/v1/chat/completions', {
      model: 'memrag',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'image_url', image_url: { url: bad } },
          ],
        },
      ],
    });
    expect(notImage.status).toBe(400);
    expect(notImage.body.error.param).toBe('messages.0.content.1.image_url.url');
    const inSystem = await call(made.app, 'POST', '/v1/chat/completions', {
      model: 'memrag',
      messages: [
        { role: 'system', content: [{ type: 'image_url', image_url: { url: PNG_URL } }] },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(inSystem.status).toBe(400);
    expect(made.llm.requests).toHaveLength(0);
  });
});
