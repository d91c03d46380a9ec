import type { Hono } from 'hono';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import type { AppContext } from '../../src/app-context.js';
import { toOpenApiPath } from '../../src/http/openapi/openapi-document.js';
import { errorReplySchema } from '../../src/api/schemas/error-reply-schemas.js';
import { reply as llmReply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { type JsonReply, call, createApp, createTestContext } from './http-test-context.js';
import { type DeclaredOperation, declaredOperations } from './openapi/declared-operations.js';
import { type DocumentValidator, documentValidator } from './openapi/document-validator.js';
import { parseSse } from '../support/parse-sse.js';

/**
 * Real replies of every route against the OpenAPI document: each status must be documented, the
 * body must validate against the document's JSON Schema, and the zod reply schema it came from
 * must name every field (zod objects drop unknown keys, so a field the schema lacks shows up as
 * a difference).
 */

let ctx: AppContext;
let app: Hono;
let validator: DocumentValidator;
let operations: DeclaredOperation[];

beforeAll(async () => {
  ctx = await createTestContext();
  const api = createApp(ctx);
  app = api;
  validator = documentValidator((await (await app.request('/openapi.json')).json()) as Record<string, unknown>);
  operations = declaredOperations(api);
});
afterAll(async () => {
  await ctx?.close();
});

function zodReplySchema(method: string, honoPath: string, status: number, mediaType: string): z.ZodType {
  const operation = operations.find((o) => o.method === method.toLowerCase() && o.path === honoPath);
  if (!operation) throw new Error(`${method} ${honoPath} is not in the catalog`);
  const schema = operation.responses[status]?.content?.[mediaType] ?? (status >= 400 ? errorReplySchema : undefined);
  if (!schema) throw new Error(`${method} ${honoPath} has no ${status} ${mediaType} reply schema`);
  return schema;
}

function expectDocumented(method: string, honoPath: string, status: number, body: unknown, mediaType = 'application/json'): void {
  const where = `${method} ${honoPath} ${status}`;
  const validate = validator.response(method, toOpenApiPath(honoPath), status, mediaType);
  expect(validate(body), `${where}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`).toBe(true);
  expect(zodReplySchema(method, honoPath, status, mediaType).parse(body), `${where}: a field the reply schema does not name`).toEqual(body);
}

function expectReply(method: string, honoPath: string, reply: JsonReply, status?: number): any {
  if (status !== undefined) expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  if (reply.body === null) {
    const documented = validator.operation(method, toOpenApiPath(honoPath)).responses[String(reply.status)];
    expect(documented, `${method} ${honoPath} ${reply.status} is not documented`).toBeDefined();
    expect(documented.content).toBeUndefined();
  } else {
    expectDocumented(method, honoPath, reply.status, reply.body);
  }
  return reply.body;
}

describe('replies match the OpenAPI document', () => {
  it('probes', async () => {
    expectReply('GET', '/healthz', await call(app, 'GET', '/healthz'), 200);
    expectReply('GET', '/readyz', await call(app, 'GET', '/readyz'), 200);
    const metrics = await app.request('/metrics');
    expect(metrics.status).toBe(200);
    expect(validator.operation('GET', '/metrics').responses['200'].content['text/plain']).toBeDefined();
  });

  it('memories', async () => {
    const agentId = 'reply-schemas';
    expectReply(
      'POST',
      '/v1/memories',
      await call(app, 'POST', '/v1/memories', { key: 'tea', content: 'Alice prefers green tea', tags: ['Alice'], metadata: { n: 1 }, agentId }),
      201,
    );
    expectReply('POST', '/v1/memories', await call(app, 'POST', '/v1/memories', { key: 'tea', content: 'Alice prefers green tea', agentId }), 200);
    expectReply(
      'PUT',
      '/v1/memories/:key',
      await call(app, 'PUT', `/v1/memories/coffee?agentId=${agentId}`, { content: 'Bob drinks coffee', tags: ['bob'] }),
      201,
    );
    expectReply('GET', '/v1/memories/:key', await call(app, 'GET', `/v1/memories/tea?agentId=${agentId}`), 200);
    expectReply('GET', '/v1/memories/:key', await call(app, 'GET', `/v1/memories/nothing?agentId=${agentId}`), 404);
    expectReply('GET', '/v1/memories', await call(app, 'GET', `/v1/memories?agentId=${agentId}&limit=1`), 200);
    const search = expectReply('POST', '/v1/memories/search', await call(app, 'POST', '/v1/memories/search', { query: 'green tea', agentId }), 200);
    expect(search.hits.length).toBeGreaterThan(0);
    expectReply('GET', '/v1/tags', await call(app, 'GET', `/v1/tags?agentId=${agentId}`), 200);
    expectReply('DELETE', '/v1/memories', await call(app, 'DELETE', `/v1/memories?agentId=${agentId}&tagsAny=bob`), 200);
    expectReply('DELETE', '/v1/memories/:key', await call(app, 'DELETE', `/v1/memories/tea?agentId=${agentId}`), 204);
  });

  it('documents and knowledge search', async () => {
    const text = '# Tea\n\nGreen tea is steamed, not oxidised.\n\n## Black\n\nBlack tea is oxidised fully.';
    const created = expectReply(
      'POST',
      '/v1/documents',
      await call(app, 'POST', '/v1/documents', { title: 'Tea', text, format: 'markdown', tags: ['tea'] }),
      201,
    );
    expectReply('POST', '/v1/documents', await call(app, 'POST', '/v1/documents', { text }), 200);
    const form = new FormData();
    form.append('file', new File(['Oolong is in between.'], 'oolong.txt', { type: 'text/plain' }));
    form.append('tags', 'tea,oolong');
    const uploaded = await app.request('/v1/documents', { method: 'POST', body: form });
    expectReply('POST', '/v1/documents', { status: uploaded.status, headers: uploaded.headers, body: await uploaded.json() }, 201);
    const unsupported = new FormData();
    unsupported.append('file', new File(['x'], 'picture.png', { type: 'image/png' }));
    const refused = await app.request('/v1/documents', { method: 'POST', body: unsupported });
    expectReply('POST', '/v1/documents', { status: refused.status, headers: refused.headers, body: await refused.json() }, 415);

    const id = created.document.id as string;
    expectReply('GET', '/v1/documents', await call(app, 'GET', '/v1/documents?tagsAny=tea'), 200);
    expectReply('GET', '/v1/documents/:id', await call(app, 'GET', `/v1/documents/${id}`), 200);
    expectReply('GET', '/v1/documents/:id/chunks', await call(app, 'GET', `/v1/documents/${id}/chunks?limit=1`), 200);
    const plain = expectReply('POST', '/v1/search', await call(app, 'POST', '/v1/search', { query: 'how is green tea made', topK: 2 }), 200);
    expect(plain.hits.length).toBeGreaterThan(0);
    const reranked = expectReply('POST', '/v1/search', await call(app, 'POST', '/v1/search', { query: 'green tea', reranker: 'lexical' }), 200);
    expect(reranked.hits[0].rerankScore).toEqual(expect.any(Number));
    // An extractive answer quotes sentences of the passage: `quotes` beside the chunk's range.
    const chat = { message: 'Is black tea oxidised fully?', tagsAny: ['tea'], agentId: 'reply-schemas-documents' };
    const quoted = expectReply('POST', '/v1/chat', await call(app, 'POST', '/v1/chat', chat), 200);
    const citation = quoted.citations.find((c: { kind: string }) => c.kind === 'document');
    expect(citation.quotes.map((q: { start: number; end: number }) => text.slice(q.start, q.end))).toContain('Black tea is oxidised fully.');
    const streamed = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...chat, stream: true }),
    });
    for (const { id: _id, ...event } of parseSse(await streamed.text())) expectDocumented('POST', '/v1/chat', 200, event, 'text/event-stream');
    expectReply('DELETE', '/v1/documents/:id', await call(app, 'DELETE', `/v1/documents/${id}`), 204);
    expectReply('GET', '/v1/documents/:id', await call(app, 'GET', `/v1/documents/${id}`), 404);
  });

  it('agents and their versions', async () => {
    const body = {
      id: 'replies',
      name: 'Replies',
      instructions: 'Be brief.',
      temperature: 0.2,
      tools: { deny: ['delete_memory'] },
      recall: { memoryTopK: 2, tagsAny: ['faq'] },
    };
    expectReply('POST', '/v1/agents', await call(app, 'POST', '/v1/agents', body), 201);
    expectReply('POST', '/v1/agents', await call(app, 'POST', '/v1/agents', body), 409);
    expectReply('POST', '/v1/agents', await call(app, 'POST', '/v1/agents', { name: 'Minimal' }), 201);
    expectReply('POST', '/v1/agents', await call(app, 'POST', '/v1/agents', { name: 'Elsewhere', provider: 'nowhere' }), 400);
    expectReply('PATCH', '/v1/agents/:id', await call(app, 'PATCH', '/v1/agents/replies', { temperature: null, budget: { maxTokens: 500 } }), 200);
    expectReply('PATCH', '/v1/agents/:id', await call(app, 'PATCH', '/v1/agents/nobody', { name: 'X' }), 404);
    expectReply('GET', '/v1/agents', await call(app, 'GET', '/v1/agents?limit=1'), 200);
    expectReply('GET', '/v1/agents/:id', await call(app, 'GET', '/v1/agents/replies'), 200);
    expectReply('GET', '/v1/agents/:id', await call(app, 'GET', '/v1/agents/nobody'), 404);
    expectReply('GET', '/v1/agents/:id/versions', await call(app, 'GET', '/v1/agents/replies/versions?limit=1'), 200);
    expectReply('GET', '/v1/agents/:id/versions/:version', await call(app, 'GET', '/v1/agents/replies/versions/1'), 200);
    expectReply('GET', '/v1/agents/:id/versions/:version', await call(app, 'GET', '/v1/agents/replies/versions/7'), 404);
    expectReply('DELETE', '/v1/agents/:id', await call(app, 'DELETE', '/v1/agents/replies'), 204);
    expectReply('DELETE', '/v1/agents/:id', await call(app, 'DELETE', '/v1/agents/replies'), 404);
  });

  it('chat, conversations and the event stream', async () => {
    await call(app, 'POST', '/v1/memories', { key: 'drink', content: 'Alice prefers green tea', agentId: 'chatter' });
    // A statement of the user's, which a later turn can quote (an assistant's answer never is).
    const first = { message: 'Alice drinks mint tea at work. What does Alice drink?', agentId: 'chatter' };
    const answer = expectReply('POST', '/v1/chat', await call(app, 'POST', '/v1/chat', first), 200);
    expect(answer.mode).toBe('extractive');

    await ctx.backgroundTasks.whenIdle();

    const stream = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'What does Alice drink?', agentId: 'chatter', stream: true }),
    });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await stream.text());
    expect(events.map((e) => e.event)).toContain('done');
    for (const { id: _id, ...event } of events) expectDocumented('POST', '/v1/chat', 200, event, 'text/event-stream');
    // The first turn's statement is recalled as a source, and cited.
    const done = events.find((e) => e.event === 'done')!.data as any;
    expect(done.citations.map((c: { kind: string }) => c.kind)).toContain('turn');
    const turns = expectReply(
      'POST',
      '/v1/turns/search',
      await call(app, 'POST', '/v1/turns/search', { query: 'What does Alice drink?', agentId: 'chatter' }),
      200,
    );
    expect(turns.hits.length).toBeGreaterThan(0);
    expectReply('POST', '/v1/turns/search', await call(app, 'POST', '/v1/turns/search', { query: '' }), 400);

    const conversationId = answer.conversationId as string;
    const q = '?agentId=chatter';
    expectReply('GET', '/v1/conversations', await call(app, 'GET', `/v1/conversations${q}`), 200);
    expectReply('GET', '/v1/conversations/:id', await call(app, 'GET', `/v1/conversations/${conversationId}${q}`), 200);
    const exported = expectReply('GET', '/v1/conversations/:id/export', await call(app, 'GET', `/v1/conversations/${conversationId}/export${q}`), 200);
    const imported = expectReply('POST', '/v1/conversations/import', await call(app, 'POST', '/v1/conversations/import', exported), 201);
    expectReply('DELETE', '/v1/conversations/:id', await call(app, 'DELETE', `/v1/conversations/${imported.conversation.id}${q}`), 204);
    expectReply('GET', '/v1/conversations/:id', await call(app, 'GET', `/v1/conversations/${imported.conversation.id}${q}`), 404);
  });

  it('a streamed LLM turn with tool calls and citations', async () => {
    const server = await startScriptedLlmServer([
      llmReply.toolCalls([{ id: 's1', name: 'search_memories', arguments: '{"query":"tea"}' }]),
      llmReply.text('Alice drinks green tea [1].', { chunkSize: 5 }),
    ]);
    try {
      const llm = createLlmProvider({ baseURL: server.url, apiKey: 'test-key', model: 'test-model', retry: { maxAttempts: 1 } });
      const withLlm = createApp({ ...ctx, llm });
      await call(withLlm, 'POST', '/v1/memories', { key: 'drink', content: 'Alice prefers green tea', agentId: 'llm-chatter' });
      const res = await withLlm.request('/v1/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ message: 'What does Alice drink?', agentId: 'llm-chatter' }),
      });
      const events = parseSse(await res.text());
      expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['retrieval', 'tool_start', 'tool_end', 'delta', 'done']));
      for (const { id: _id, ...event } of events) expectDocumented('POST', '/v1/chat', 200, event, 'text/event-stream');
      const done = events.find((e) => e.event === 'done')!.data as any;
      expect(done.citations.length).toBeGreaterThan(0);
      expect(done.toolCalls.length).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('runs: a pause for client tools, one for approval, the run, and the streamed pause', async () => {
    const server = await startScriptedLlmServer([
      llmReply.toolCalls([{ id: 'c1', name: 'get_location', arguments: '{"precise":true}' }]),
      llmReply.toolCalls([{ id: 'd1', name: 'delete_memory', arguments: '{"key":"gone"}' }]),
      llmReply.text('Done [1].'),
      llmReply.toolCalls([{ id: 'c2', name: 'get_location', arguments: '{}' }]),
    ]);
    try {
      const llm = createLlmProvider({ baseURL: server.url, apiKey: 'test-key', model: 'test-model', retry: { maxAttempts: 1 } });
      const withLlm = createApp({ ...ctx, llm });
      const tools = [
        { type: 'function', function: { name: 'get_location', description: 'Where the device is', parameters: { type: 'object', properties: {} } } },
      ];
      await call(withLlm, 'POST', '/v1/agents', { id: 'runner', name: 'Runner' });
      const paused = expectReply('POST', '/v1/chat', await call(withLlm, 'POST', '/v1/chat', { message: 'Where am I?', agentId: 'runner', tools }), 200);
      expect(paused.status).toBe('requires_action');
      expectReply('GET', '/v1/runs/:runId', await call(withLlm, 'GET', `/v1/runs/${paused.runId}`), 200);
      const approval = expectReply(
        'POST',
        '/v1/runs/:runId/tool-outputs',
        await call(withLlm, 'POST', `/v1/runs/${paused.runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'c1', output: 'Oslo' }] }),
        200,
      );
      expect(approval.status).toBe('requires_approval');
      expectReply('GET', '/v1/runs/:runId', await call(withLlm, 'GET', `/v1/runs/${paused.runId}`), 200);
      const done = expectReply(
        'POST',
        '/v1/runs/:runId/approvals',
        await call(withLlm, 'POST', `/v1/runs/${paused.runId}/approvals`, { decisions: [{ toolCallId: 'd1', approve: false, reason: 'no' }] }),
        200,
      );
      expect(done.status).toBe('completed');
      expectReply(
        'POST',
        '/v1/runs/:runId/approvals',
        await call(withLlm, 'POST', `/v1/runs/${paused.runId}/approvals`, { decisions: [{ toolCallId: 'd1', approve: true }] }),
        409,
      );
      expectReply('POST', '/v1/runs/:runId/cancel', await call(withLlm, 'POST', `/v1/runs/${paused.runId}/cancel`), 409);
      expectReply('GET', '/v1/runs/:runId/events', await call(withLlm, 'GET', '/v1/runs/00000000-0000-4000-8000-000000000000/events'), 404);
      expectReply('GET', '/v1/runs/:runId', await call(withLlm, 'GET', '/v1/runs/00000000-0000-4000-8000-000000000000'), 404);

      const res = await withLlm.request('/v1/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Where now?', tools, stream: true }),
      });
      const events = parseSse(await res.text());
      expect(events.at(-1)!.event).toBe('requires_action');
      for (const { id: _id, ...event } of events) expectDocumented('POST', '/v1/chat', 200, event, 'text/event-stream');
      const cancelled = expectReply('POST', '/v1/runs/:runId/cancel', await call(withLlm, 'POST', `/v1/runs/${events.at(-1)!.data.runId}/cancel`), 200);
      expect(cancelled.status).toBe('cancelled');
    } finally {
      await server.close();
    }
  });

  it('errors', async () => {
    expectReply('POST', '/v1/memories', await call(app, 'POST', '/v1/memories', { content: '' }), 400);
    expectReply('POST', '/v1/memories', await call(app, 'POST', '/v1/memories', '{not json'), 400);
    expectReply('POST', '/v1/memories', await call(app, 'POST', '/v1/memories', { content: 'x'.repeat(ctx.config.MAX_BODY_BYTES) }), 413);
    expectReply('GET', '/v1/documents/:id', await call(app, 'GET', '/v1/documents/not-a-uuid'), 400);
    expectReply('GET', '/docs/:asset', await call(app, 'GET', '/docs/secret.txt'), 400);
  });
});
