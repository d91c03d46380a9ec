/**
 * Conversation compaction over a long chat, through the real chat pipeline (POST /v1/chat on the
 * embedded database: recall, system prompt, built-in tools, compaction before every LLM call,
 * checkpoints and the summary extended after each reply) against a scripted OpenAI-compatible
 * model on 127.0.0.1 that answers at once and writes checkpoints and summaries. Every third turn
 * searches the memories. Turns follow each other without a pause: the background work of one
 * turn races the next question, as it would with a quick user.
 *
 * Per window, with and without compaction (a window no conversation reaches), it reports:
 * summariser calls on the critical path (made while a turn's chat requests were) and in the
 * background, the share of requests that carry the previous turn (raw or as its checkpoint),
 * tokens sent, requests over the limit, tool results cut, and the time a turn takes (p50/p95).
 *
 *   npm run bench:compaction        (BENCH_TURNS, default 80; BENCH_WINDOWS, default 4096,8192)
 */
import { performance } from 'node:perf_hooks';
import { createAppContext } from '../../src/app-context.js';
import { compactionLimit, compactionSettingsFor } from '../../src/compaction/compaction-config.js';
import { loadConfig } from '../../src/config/config.js';
import { createApp } from '../../src/http/app.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { conversationModel, kindOf, requestTokens } from '../../testkit/scripted-conversation-llm.js';
import { startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 80);
const WINDOWS = (process.env.BENCH_WINDOWS ?? '4096,8192').split(',').map(Number);
const MODEL = 'bench-model';

const question = (n: number) => (n === 5 ? 'Turn 5: please remember that my locker code is 4512.' : `Turn ${n}: what do my notes say about subject ${n % 17}?`);
const toolFor = (text: string) => {
  const n = Number(/^Turn (\d+):/.exec(text)?.[1] ?? 0);
  return n % 3 === 0 ? { name: 'search_memories', arguments: { query: text.slice(0, 60), topK: 3 } } : undefined;
};

interface RunResult {
  limit: number;
  tokensSent: number;
  largestRequest: number;
  /** Estimated tokens of every chat request, in order. */
  requestTokens: number[];
  requests: number;
  withPrevious: number;
  criticalCalls: number;
  backgroundCalls: number;
  checkpointCalls: number;
  toolResultsCut: number;
  turnMs: number[];
  strategies: Map<string, number>;
}

async function run(window: number): Promise<RunResult> {
  const llm = await startScriptedLlmServer(conversationModel({ toolFor }));
  const config = loadConfig({
    LLM_BASE_URL: llm.url,
    LLM_API_KEY: 'bench',
    LLM_MODEL: MODEL,
    LLM_MAX_ATTEMPTS: '1',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MEMORY_EXTRACTION: 'off',
    COMPACTION_MODELS: JSON.stringify({ [MODEL]: { contextWindow: window, outputReserve: 1_024 } }),
  });
  const ctx = await createAppContext(config, { embedder: createHashEmbedder(64) });
  const app = createApp(ctx);
  for (let i = 0; i < 17; i++) {
    await ctx.memories
      .forTenant('default')
      .save({ key: `note-${i}`, content: `Notes on subject ${i}: ${'a fairly long note about the subject, with details. '.repeat(6)}` });
  }
  const limit = compactionLimit(compactionSettingsFor(config, MODEL));
  const result: RunResult = {
    limit,
    tokensSent: 0,
    largestRequest: 0,
    requestTokens: [],
    requests: 0,
    withPrevious: 0,
    criticalCalls: 0,
    backgroundCalls: 0,
    checkpointCalls: 0,
    toolResultsCut: 0,
    turnMs: [],
    strategies: new Map(),
  };
  let conversationId: string | undefined;
  for (let n = 1; n <= TURNS; n++) {
    const first = llm.requests.length;
    const started = performance.now();
    const res = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: question(n), stream: true, ...(conversationId ? { conversationId } : {}) }),
    });
    const events = (await res.text()).split('\n\n').filter(Boolean);
    result.turnMs.push(performance.now() - started);
    for (const block of events) {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>;
      if (event === 'retrieval') conversationId = data.conversationId as string;
      if (event === 'compaction') {
        result.criticalCalls += data.summarizerCalls as number;
        for (const s of data.strategies as string[]) result.strategies.set(s, (result.strategies.get(s) ?? 0) + 1);
        if ((data.strategies as string[]).includes('truncate_tool_results')) result.toolResultsCut += 1;
      }
      if (event === 'error') throw new Error(`turn ${n}: ${JSON.stringify(data)}`);
    }
    for (const request of llm.requests.slice(first).filter((r) => kindOf(r) === 'chat')) {
      const tokens = requestTokens(request);
      result.requests += 1;
      result.tokensSent += tokens;
      result.largestRequest = Math.max(result.largestRequest, tokens);
      result.requestTokens.push(tokens);
      if (n === 1 || JSON.stringify(request.body.messages).includes(JSON.stringify(question(n - 1)).slice(1, -1))) result.withPrevious += 1;
    }
  }
  await ctx.backgroundTasks.whenIdle();
  const summaries = llm.requests.filter((r) => kindOf(r) === 'summary').length;
  result.backgroundCalls = summaries - result.criticalCalls;
  result.checkpointCalls = llm.requests.filter((r) => kindOf(r) === 'checkpoint').length;
  await ctx.close();
  await llm.close();
  return result;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

console.log(`compaction bench: ${TURNS} turns, every third with a memory search; windows ${WINDOWS.join(', ')}`);
const rows = [];
for (const window of WINDOWS) {
  // Interleaved per window, so both runs see the same machine state.
  const without = await run(100_000_000);
  const withC = await run(window);
  for (const [label, r] of [
    [`${window}: with compaction`, withC],
    [`${window}: without (same turns)`, without],
  ] as const) {
    rows.push({
      run: label,
      limit: withC.limit,
      'tokens sent': r.tokensSent,
      'largest request': r.largestRequest,
      // The window's limit for both runs: what the uncompacted conversation would overflow.
      'over the limit': r.requestTokens.filter((t) => t > withC.limit).length,
      'carry previous turn': `${((100 * r.withPrevious) / r.requests).toFixed(1)}%`,
      'critical summariser calls/turn': (r.criticalCalls / TURNS).toFixed(3),
      'background summariser calls': r.backgroundCalls,
      'checkpoint calls': r.checkpointCalls,
      'turns with tool results cut': r.toolResultsCut,
      'turn p50 ms': pct(r.turnMs, 50).toFixed(1),
      'turn p95 ms': pct(r.turnMs, 95).toFixed(1),
    });
  }
  console.log(`window ${window}: strategies of the compacted requests`, Object.fromEntries(withC.strategies));
  console.log(
    `window ${window}: time compaction adds to a turn, p50 ${(pct(withC.turnMs, 50) - pct(without.turnMs, 50)).toFixed(1)} ms, p95 ${(pct(withC.turnMs, 95) - pct(without.turnMs, 95)).toFixed(1)} ms (the scripted model answers at once: summariser calls cost their round trip only)`,
  );
}
console.table(rows);
