/**
 * The agent loop's own cost: time per turn outside the LLM and the tools, and time to the first
 * streamed byte of /v1/chat, against a scripted OpenAI-compatible server on 127.0.0.1 that
 * answers at once. Bounded: a fixed number of turns.
 *
 *   npx tsx scripts/bench/agent-overhead.ts        (BENCH_TURNS, default 200)
 */
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import { z } from 'zod';
import { runAgentTurn } from '../../src/llm/agent-loop.js';
import { createLlmProvider, type LlmProvider } from '../../src/llm/llm-provider.js';
import { defineTool } from '../../src/llm/tool.js';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createApp } from '../../src/http/app.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { blockPromptCost } from './block-prompt-cost.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 200);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const row = (label: string, xs: number[]) => ({ measure: label, 'p50 ms': pct(xs, 50).toFixed(3), 'p95 ms': pct(xs, 95).toFixed(3), n: xs.length });

/** Times every LLM call, so the loop's own time is what remains of a turn. */
function timed(provider: LlmProvider, spent: { ms: number }): LlmProvider {
  const wrap =
    <A, R>(fn: (a: A) => Promise<R>) =>
    async (a: A) => {
      const start = performance.now();
      try {
        return await fn(a);
      } finally {
        spent.ms += performance.now() - start;
      }
    };
  return { model: provider.model, complete: wrap(provider.complete.bind(provider)), stream: wrap(provider.stream.bind(provider)) };
}

async function loopOverhead() {
  // Every turn: one reply with two parallel tool calls, then a text answer.
  const llm = await startScriptedLlmServer((_request, index) =>
    index % 2 === 0
      ? reply.toolCalls([
          { name: 'lookup', arguments: '{"q":"alpha"}' },
          { name: 'lookup', arguments: '{"q":"beta"}' },
        ])
      : reply.text('Both lookups are done [1].', { usage: { prompt_tokens: 120, completion_tokens: 8 } }),
  );
  const spent = { ms: 0 };
  const provider = timed(createLlmProvider({ baseURL: llm.url, apiKey: 'bench', model: 'scripted' }), spent);
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks a word up',
    parameters: z.object({ q: z.string() }),
    execute: async ({ q }) => ({ q, found: true }),
  });
  const overhead: number[] = [];
  const total: number[] = [];
  const llmShare: number[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    spent.ms = 0;
    let toolMs = 0;
    const toolStarts = new Map<string, number>();
    const start = performance.now();
    await runAgentTurn({
      provider,
      systemPrompt: 'You are a benchmark.',
      messages: [{ role: 'user', content: `turn ${turn}` }],
      tools: [lookup],
      stream: false,
      onEvent: (event) => {
        if (event.type === 'tool_start') toolStarts.set(event.call.id, performance.now());
        if (event.type === 'tool_end') toolMs = Math.max(toolMs, performance.now() - (toolStarts.get(event.call.id) ?? performance.now()));
      },
    });
    const elapsed = performance.now() - start;
    if (turn >= 10) {
      total.push(elapsed);
      llmShare.push(spent.ms);
      overhead.push(elapsed - spent.ms - toolMs);
    }
  }
  await llm.close();
  return [
    row('turn total (2 LLM calls, 2 parallel tools)', total),
    row('inside the LLM client (local scripted server)', llmShare),
    row('loop overhead (outside LLM and tools)', overhead),
  ];
}

async function firstByte() {
  const llm = await startScriptedLlmServer(() => reply.text('Alice drinks green tea [1]. '.repeat(20), { chunkSize: 12 }));
  const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent' });
  const ctx = await createAppContext(config, {
    embedder: createHashEmbedder(64),
    llm: createLlmProvider({ baseURL: llm.url, apiKey: 'bench', model: 'scripted' }),
  });
  await ctx.memories.forTenant('default').save({ key: 'tea', content: 'Alice prefers green tea in the afternoon' });
  // Working memory's share of a turn's prompt, on the same store (its own tenant).
  const blocks = await blockPromptCost(ctx, TURNS, row);
  const server = serve({ fetch: createApp(ctx).fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat`;
  const firstByteMs: number[] = [];
  const firstDeltaMs: number[] = [];
  const doneMs: number[] = [];
  for (let i = 0; i < Math.min(TURNS, 100); i++) {
    const start = performance.now();
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ message: 'What does Alice drink?', stream: true }),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let first = true;
    let sawDelta = false;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (first) {
        firstByteMs.push(performance.now() - start);
        first = false;
      }
      text += decoder.decode(value, { stream: true });
      if (!sawDelta && text.includes('event: delta')) {
        sawDelta = true;
        firstDeltaMs.push(performance.now() - start);
      }
    }
    doneMs.push(performance.now() - start);
  }
  server.close();
  await ctx.close();
  await llm.close();
  return [
    row('/v1/chat stream: first byte', firstByteMs),
    row('/v1/chat stream: first delta event', firstDeltaMs),
    row('/v1/chat stream: whole reply', doneMs),
    ...blocks,
  ];
}

console.log(`agent loop bench: ${TURNS} turns against a local scripted LLM`);
console.table([...(await loopOverhead()), ...(await firstByte())]);
