/**
 * What `POST /v1/chat/completions` adds to a model call: the official `openai` client calling a
 * scripted OpenAI-compatible server on 127.0.0.1 directly, against the same client calling
 * memrag's completions route in front of that server. Requests alternate between the two in one
 * run, so the machine's noise falls on both. Measured plain and streamed (first content token and
 * whole reply), without recall (an agent that recalls no memories or documents, and a user with
 * no past turns) and with it (the default agent and a user with 200 memories and past turns).
 * The server embeds with the bundled default embedder, as `npm start` does. Each turn leaves work
 * in the background (its checkpoint, its turn embedded for recall): by default each request waits
 * for it to settle first, as a person reading the reply would give it time to; BENCH_BACK_TO_BACK=1
 * sends the next request at once instead, so that it competes with that work.
 *
 *   npx tsx scripts/bench/chat-completions.ts        (BENCH_REQUESTS per cell, default 150;
 *                                                     BENCH_DATABASE_URL for a PostgreSQL server)
 */
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import OpenAI from 'openai';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { createApp } from '../../src/http/app.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 150);
const WARMUP = 10;
const ANSWER = 'You drink green tea every morning, and coffee after lunch [1]. ';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

const llm = await startScriptedLlmServer((request) =>
  reply.text(ANSWER, { chunkSize: 16, usage: { prompt_tokens: 200 + request.body.messages.length, completion_tokens: 16 } }),
);
const BACK_TO_BACK = process.env.BENCH_BACK_TO_BACK === '1';
const database = process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : { DATA_DIR: 'memory://' };
const config = loadConfig({ ...database, LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' });
const embedder = await createEmbedder(config);
const ctx = await createAppContext(config, { embedder, llm: createLlmProvider({ baseURL: llm.url, apiKey: 'bench', model: 'scripted' }) });
const tenant = 'default';
await ctx.agents.forTenant(tenant).create('bare', { name: 'No recall', recall: { memoryTopK: 0, knowledgeTopK: 0, turnTopK: 0 } });
const topics = ['tea', 'coffee', 'cycling', 'piano', 'garden', 'Lisbon', 'Oslo', 'books', 'running', 'cooking'];
for (let i = 0; i < 200; i++) {
  const topic = topics[i % topics.length]!;
  await ctx.memories.forTenant(tenant).save({ key: `m${i}`, content: `Fact ${i}: the user mentioned ${topic} on day ${i}.`, userId: 'rich', tags: [topic] });
}
const server = serve({ fetch: createApp(ctx).fetch, port: 0, hostname: '127.0.0.1' });
await new Promise((resolve) => server.once('listening', resolve));
const memragUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
const direct = new OpenAI({ baseURL: llm.url, apiKey: 'bench', maxRetries: 0 });
const memrag = new OpenAI({ baseURL: memragUrl, apiKey: 'bench', maxRetries: 0 });
// Past turns for the recalling user: a few threads that went through memrag.
for (let i = 0; i < 20; i++) {
  await memrag.chat.completions.create({
    model: 'memrag',
    user: 'rich',
    messages: [{ role: 'user', content: `Day ${i}: I talked about ${topics[i % topics.length]}.` }],
  });
}
await ctx.backgroundTasks.whenIdle();

interface Cell {
  label: string;
  client: OpenAI;
  model: string;
  user?: string;
}
const cells: Cell[] = [
  { label: 'direct to the model', client: direct, model: 'scripted' },
  { label: 'memrag, no recall', client: memrag, model: 'memrag:bare', user: 'nobody' },
  { label: 'memrag, with recall', client: memrag, model: 'memrag', user: 'rich' },
];
const question = 'What do I drink in the morning?';
const results = new Map<string, { plain: number[]; streamed: number[]; firstToken: number[] }>(
  cells.map((c) => [c.label, { plain: [], streamed: [], firstToken: [] }]),
);

for (let i = 0; i < REQUESTS + WARMUP; i++) {
  for (const cell of cells) {
    const out = results.get(cell.label)!;
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: `${question} (${i})` }];
    if (!BACK_TO_BACK) await ctx.backgroundTasks.whenIdle();
    let start = performance.now();
    await cell.client.chat.completions.create({ model: cell.model, messages, ...(cell.user ? { user: cell.user } : {}) });
    const plainMs = performance.now() - start;
    if (!BACK_TO_BACK) await ctx.backgroundTasks.whenIdle();
    start = performance.now();
    const stream = await cell.client.chat.completions.create({ model: cell.model, messages, stream: true, ...(cell.user ? { user: cell.user } : {}) });
    let first: number | undefined;
    for await (const chunk of stream) if (first === undefined && chunk.choices[0]?.delta.content) first = performance.now() - start;
    const streamedMs = performance.now() - start;
    if (i < WARMUP) continue;
    out.plain.push(plainMs);
    out.streamed.push(streamedMs);
    out.firstToken.push(first ?? Number.NaN);
  }
}
await ctx.backgroundTasks.whenIdle();

const anchor = results.get(cells[0]!.label)!;
const rows = cells.map((cell) => {
  const r = results.get(cell.label)!;
  const over = (xs: number[], base: number[], p: number) => (cell === cells[0] ? '' : (pct(xs, p) - pct(base, p)).toFixed(1));
  return {
    path: cell.label,
    'plain p50': pct(r.plain, 50).toFixed(1),
    'plain p95': pct(r.plain, 95).toFixed(1),
    'first token p50': pct(r.firstToken, 50).toFixed(1),
    'first token p95': pct(r.firstToken, 95).toFixed(1),
    'streamed p50': pct(r.streamed, 50).toFixed(1),
    'overhead plain p50': over(r.plain, anchor.plain, 50),
    'overhead plain p95': over(r.plain, anchor.plain, 95),
    'overhead first token p50': over(r.firstToken, anchor.firstToken, 50),
    'overhead streamed p50': over(r.streamed, anchor.streamed, 50),
  };
});
console.log(
  `/v1/chat/completions overhead: ${REQUESTS} requests per cell (after ${WARMUP} warm-up), ms, ${config.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, ` +
    `embedder ${embedder.id}, ${BACK_TO_BACK ? 'back to back' : 'background work settled between requests'}`,
);
console.table(rows);
server.close();
await ctx.close();
await llm.close();
