import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { call, createApp, createTestContext } from './http-test-context.js';

let ctx: AppContext;
beforeAll(async () => {
  ctx = await createTestContext();
  const app = createApp(ctx);
  const guide = '# Pumps\n\n## Priming\n\nPrime the centrifugal pump with water before starting it.\n\n## Storage\n\nDrain the pump before winter.';
  expect(
    (await call(app, 'POST', '/v1/documents', { title: 'Pump guide', text: guide, format: 'markdown', tags: ['manual'], maxTokens: 24, overlapTokens: 0 }))
      .status,
  ).toBe(201);
  await call(app, 'POST', '/v1/documents', { title: 'Recipes', text: 'Bake the bread at 220 degrees.', tags: ['kitchen'] });
});
afterAll(() => ctx?.close());

describe('POST /v1/chat over ingested documents', () => {
  it('retrieves chunks of ingested documents and cites them with heading path and range (extractive)', async () => {
    const res = await call(createApp(ctx), 'POST', '/v1/chat', { message: 'How do I prime the centrifugal pump?', topK: 2, candidateK: 20 });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('extractive');
    const [first] = res.body.citations;
    expect(first).toMatchObject({ kind: 'document', title: 'Pump guide', headingPath: ['Pumps', 'Priming'] });
    const document = await ctx.documents.forTenant('default').getText(first.documentId);
    expect(document!.slice(first.start, first.end)).toContain('Prime the centrifugal pump');
  });

  it('applies the tag filter to document retrieval', async () => {
    const res = await call(createApp(ctx), 'POST', '/v1/chat', { message: 'How do I prime the centrifugal pump?', tagsAny: ['kitchen'] });
    expect(res.body.citations.every((c: { title?: string }) => c.title !== 'Pump guide')).toBe(true);
  });

  it('puts the retrieved chunk into the LLM prompt as a numbered document source', async () => {
    const server = await startScriptedLlmServer([reply.text('Fill it with water first [1].')]);
    try {
      const llm = createLlmProvider({ baseURL: server.url, apiKey: 'k', model: 'm', retry: { maxAttempts: 1 } });
      const res = await call(createApp({ ...ctx, llm }), 'POST', '/v1/chat', { message: 'How do I prime the centrifugal pump?', topK: 1 });
      expect(res.status).toBe(200);
      const prompt = String(server.requests[0]!.body.messages[1]!.content);
      expect(prompt).toMatch(/<source id="1" kind="document"[^>]*>\n[^<]*Prime the centrifugal pump/);
      expect(res.body.citations).toEqual([expect.objectContaining({ id: 1, kind: 'document', title: 'Pump guide' })]);
    } finally {
      await server.close();
    }
  });

  it('rejects a candidateK out of range, naming the field', async () => {
    const res = await call(createApp(ctx), 'POST', '/v1/chat', { message: 'pump', candidateK: 0 });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.details)).toContain('candidateK');
  });
});
