import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { describeError } from '../../src/api/error-mapping.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { parseSse } from '../support/parse-sse.js';
import { call, clearConversations, clearMemories, createApp, createTestContext } from './http-test-context.js';

/** Answers without an LLM (issue 53, items 1 and 5), through the HTTP API and MCP. */

let ctx: AppContext;
let app: Hono;

beforeAll(async () => {
  ctx = await createTestContext();
  app = createApp(ctx);
});
afterAll(async () => {
  await ctx?.close();
});
beforeEach(async () => {
  await clearMemories(ctx);
  await clearConversations(ctx);
  const rows = (await ctx.database.db.execute(sql`SELECT id::text AS id FROM documents`)) as unknown as { rows: { id: string }[] };
  for (const { id } of rows.rows) await ctx.documents.forTenant('default').delete(id);
});

const CAT = 'Carol has a cat called Biscuit';
const ROLE_LABEL = /\b(?:Assistant|User):/;

async function saveCarolsCat(): Promise<void> {
  const saved = await call(app, 'POST', '/v1/memories', { key: 'pet', content: CAT, userId: 'carol' });
  expect(saved.status).toBeLessThan(300);
}

/** Asks `ask` four times, each turn stored and indexed before the next, as a client asking again would. */
async function askFourTimes(ask: () => Promise<string>): Promise<string[]> {
  const answers: string[] = [];
  for (let i = 0; i < 4; i++) {
    answers.push(await ask());
    await ctx.backgroundTasks.whenIdle();
  }
  return answers;
}

function expectSameQuotedAnswer(answers: readonly string[]): void {
  for (const answer of answers) {
    expect(answer).not.toMatch(ROLE_LABEL);
    expect(answer.split(CAT)).toHaveLength(2);
    expect(answer).toBe(`${CAT} [1]`);
  }
}

describe('answers without an LLM do not grow with every question', () => {
  it('quotes the memory, never an earlier answer, when /v1/chat is asked the same four times', async () => {
    await saveCarolsCat();
    const answers = await askFourTimes(async () => {
      const res = await call(app, 'POST', '/v1/chat', { message: 'What is the name of my cat?', userId: 'carol' });
      expect(res.status).toBe(200);
      expect(res.body.mode).toBe('extractive');
      expect(res.body.citations).toEqual([expect.objectContaining({ id: 1, kind: 'memory', key: 'pet' })]);
      return res.body.answer as string;
    });
    // The earlier turns are recalled, so the test would pass vacuously if they were not.
    const turns = await call(app, 'POST', '/v1/turns/search', { query: 'What is the name of my cat?', userId: 'carol' });
    expect(turns.body.hits.length).toBeGreaterThanOrEqual(3);
    expectSameQuotedAnswer(answers);
  });

  it('quotes the memory, never an earlier answer, through /v1/chat/completions', async () => {
    await saveCarolsCat();
    const answers = await askFourTimes(async () => {
      const res = await call(app, 'POST', '/v1/chat/completions', {
        model: 'memrag',
        user: 'carol',
        messages: [{ role: 'user', content: 'What is the name of my cat?' }],
      });
      expect(res.status).toBe(200);
      expect(res.body.memrag.citations).toEqual([expect.objectContaining({ id: 1, kind: 'memory', key: 'pet' })]);
      return res.body.choices[0].message.content as string;
    });
    expectSameQuotedAnswer(answers);
  });

  it('quotes the memory, never an earlier answer, through the MCP chat tool', async () => {
    await saveCarolsCat();
    const server: ListeningServer = await listen(app);
    const client = new Client({ name: 'memrag-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`)));
      const answers = await askFourTimes(async () => {
        const result = (await client.callTool({ name: 'chat', arguments: { message: 'What is the name of my cat?', userId: 'carol' } })) as CallToolResult;
        const [first] = result.content;
        if (first?.type !== 'text') throw new Error('the chat tool answered no text');
        return (JSON.parse(first.text) as { answer: string }).answer;
      });
      expectSameQuotedAnswer(answers);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("still quotes what the user said in an earlier conversation, without the turn's role label", async () => {
    const told = await call(app, 'POST', '/v1/chat', { message: 'My cat Biscuit only eats salmon on Sundays.', userId: 'carol' });
    expect(told.status).toBe(200);
    await ctx.backgroundTasks.whenIdle();

    const res = await call(app, 'POST', '/v1/chat', { message: 'What does Biscuit eat on Sundays?', userId: 'carol' });
    expect(res.body.answer).toBe('My cat Biscuit only eats salmon on Sundays. [1]');
    expect(res.body.citations).toEqual([expect.objectContaining({ id: 1, kind: 'turn', conversationId: told.body.conversationId, turn: 1 })]);
  });
});

describe('extractive citations count from 1 in the order they appear', () => {
  it('numbers the only citation [1] when other sources were recalled before it, and the streamed sources agree', async () => {
    // Shared memories recalled before the document, which is the one that answers.
    await call(app, 'POST', '/v1/memories', { key: 'boat', content: 'The rowing boat is kept in the shed by the lake.' });
    await call(app, 'POST', '/v1/memories', { key: 'lake', content: 'The lake freezes over in January most years.' });
    const doc = await call(app, 'POST', '/v1/documents', {
      title: 'Pump manual',
      format: 'markdown',
      text: '# Priming\n\nOpen the vent valve and fill the casing with water before starting the pump.',
    });
    expect(doc.status).toBeLessThan(300);

    const res = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'How do I prime the pump with water?', stream: true }),
    });
    const events = parseSse(await res.text());
    const retrieval = events.find((e) => e.event === 'retrieval')!.data;
    const done = events.find((e) => e.event === 'done')!.data;

    expect(done.answer).toBe('Open the vent valve and fill the casing with water before starting the pump. [1]');
    expect(done.citations).toEqual([expect.objectContaining({ id: 1, kind: 'document', title: 'Pump manual' })]);
    // What the streamed sources number [1] is what the reply cites as [1]; the others follow it.
    expect(retrieval.sources[0]).toMatchObject({ id: 1, kind: 'document', title: 'Pump manual' });
    expect(retrieval.sources.map((s: { id: number }) => s.id)).toEqual(retrieval.sources.map((_: unknown, i: number) => i + 1));
    expect(retrieval.sources.length).toBeGreaterThan(1);
  });
});

describe("a PDF's headings", () => {
  it('are never quoted as sentences: under three words or without a verb', async () => {
    const form = new FormData();
    form.append('file', new File([readFileSync(new URL('../fixtures/documents/two-pages.pdf', import.meta.url))], 'report.pdf'));
    const uploaded = await app.request('/v1/documents', { method: 'POST', body: form });
    expect(uploaded.status).toBe(201);

    // The PDF's text: "Quarterly report\nRevenue grew by 12 percent in the third quarter.\n\nOutlook\nWe expect steady growth…".
    // Its headings are no answer: never "Revenue grew by 12 percent in the third quarter. [1] Quarterly report [1] Outlook [1]".
    const res = await call(app, 'POST', '/v1/chat', { message: 'How did revenue grow in the quarterly report, and what is the outlook?' });
    expect(res.body.mode).toBe('extractive');
    expect(res.body.answer).toContain('Revenue grew by 12 percent in the third quarter. [1]');
    for (const heading of ['Quarterly report [', 'Outlook [']) expect(res.body.answer).not.toContain(heading);
    const quoted = res.body.citations[0].quotes.length;
    expect(res.body.answer.match(/\[1\]/g)).toHaveLength(quoted);
  });
});

describe("the README's examples, on the default embedder", () => {
  let readme: AppContext;
  let readmeApp: Hono;
  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' });
    readme = await createAppContext(config, { embedder: await createEmbedder(config), describeError });
    readmeApp = createApp(readme);
    // As the README's tour saves them.
    await call(readmeApp, 'POST', '/v1/documents', {
      title: 'Pump manual',
      format: 'markdown',
      tags: ['manuals'],
      source: 'wiki://pump',
      text: '# Priming\n\nOpen the vent valve and fill the casing with water before starting the pump.',
    });
    await call(readmeApp, 'POST', '/v1/memories', { key: 'tea', content: 'Alice prefers green tea in the afternoon', tags: ['preferences'], userId: 'alice' });
  });
  afterAll(async () => {
    await readme?.close();
  });

  it('answers "What do I drink?" asked by alice from her memory (it declined, naming the pump manual)', async () => {
    const res = await call(readmeApp, 'POST', '/v1/chat/completions', {
      model: 'memrag',
      user: 'alice',
      messages: [{ role: 'user', content: 'What do I drink?' }],
    });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('Alice prefers green tea in the afternoon [1]');
    expect(res.body.memrag.citations).toEqual([expect.objectContaining({ id: 1, kind: 'memory', key: 'tea' })]);
  });

  it('still declines what her memory does not answer', async () => {
    const res = await call(readmeApp, 'POST', '/v1/chat', { message: 'What is my passport number?', userId: 'alice' });
    expect(res.body.answer).toMatch(/^Nothing in the memories or documents answers that question\./);
  });

  it('answers how to prime the pump as the README shows, citing the manual as [1]', async () => {
    const res = await call(readmeApp, 'POST', '/v1/chat', { message: 'How do I prime the pump?', userId: 'alice' });
    expect(res.body).toMatchObject({ mode: 'extractive', answer: 'Open the vent valve and fill the casing with water before starting the pump. [1]' });
    expect(res.body.citations).toEqual([expect.objectContaining({ id: 1, kind: 'document', title: 'Pump manual', headingPath: ['Priming'] })]);
  });
});
