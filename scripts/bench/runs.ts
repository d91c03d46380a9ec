/**
 * What runs cost: (1) pausing a turn for a client tool and resuming it, against the same turn
 * with a built-in tool that never pauses (same two model calls); the state's own write and read;
 * (2) /v1/chat's time to first byte with an agent record against without one. A listening server
 * on 127.0.0.1 and a scripted OpenAI-compatible server that answers at once; rounds interleaved.
 *
 *   npm run bench:runs                        (PGlite in memory; BENCH_ROUNDS, default 100)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:runs   (the PostgreSQL server too)
 */
import { listenOnLoopback } from './lib/listening-app.js';
import { performance } from 'node:perf_hooks';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
const WARMUP = 10;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const row = (driver: string, label: string, xs: number[]) => ({
  driver,
  measure: label,
  'p50 ms': pct(xs, 50).toFixed(2),
  'p95 ms': pct(xs, 95).toFixed(2),
  n: xs.length,
});

const LOCATION_TOOL = {
  type: 'function',
  function: { name: 'get_location', description: 'The device location', parameters: { type: 'object', properties: { precise: { type: 'boolean' } } } },
};

async function bench(driver: string, env: Record<string, string>) {
  // A tool call first, the answer once a tool result is in the request: the same two calls for both kinds of turn.
  const llm = await startScriptedLlmServer((request) => {
    const last = request.body.messages.at(-1);
    if (last?.role === 'tool') return reply.text('You are in Oslo, and the note says so [1]. '.repeat(4), { chunkSize: 16 });
    const client = (request.body.tools ?? []).some((t) => t.function.name === 'get_location');
    return reply.toolCalls([
      client ? { name: 'get_location', arguments: '{"precise":true}' } : { name: 'search_memories', arguments: '{"query":"where am I"}' },
    ]);
  });
  const ctx: AppContext = await createAppContext(loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off', ...env }), {
    embedder: createHashEmbedder(64),
    llm: createLlmProvider({ baseURL: llm.url, apiKey: 'bench', model: 'scripted' }),
  });
  for (let i = 0; i < 20; i++) await ctx.memories.forTenant('default').save({ key: `note-${i}`, content: `Note ${i}: the office is in Oslo, floor ${i}` });
  await ctx.agents.forTenant('default').create('bench-agent', { name: 'Bench agent', instructions: 'Answer briefly.', recall: { memoryTopK: 5 } });
  const listener = await listenOnLoopback(ctx);
  const { base } = listener;
  const post = (path: string, body: unknown) => listener.post<Record<string, unknown>>(path, body);

  const builtIn: number[] = [];
  const pausedTurn: number[] = [];
  const pauseRequest: number[] = [];
  const resumeRequest: number[] = [];
  const persist: number[] = [];
  const reload: number[] = [];
  const ttfbAgent: number[] = [];
  const ttfbPlain: number[] = [];
  const runs = ctx.runs.forTenant('default');

  const firstByte = async (agentId: string) => {
    const start = performance.now();
    const res = await fetch(`${base}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Where is the office?', agentId, stream: true }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    const elapsed = performance.now() - start;
    while (!(await reader.read()).done);
    return elapsed;
  };

  for (let round = 0; round < ROUNDS + WARMUP; round++) {
    const keep = round >= WARMUP;
    // Rotated, so that neither kind of turn always runs on a warmer process.
    const order = round % 2 === 0 ? ['builtIn', 'client'] : ['client', 'builtIn'];
    for (const kind of order) {
      if (kind === 'builtIn') {
        const start = performance.now();
        const done = await post('/v1/chat', { message: 'Where am I?' });
        if (done.status !== 'completed') throw new Error(`built-in turn: ${JSON.stringify(done)}`);
        if (keep) builtIn.push(performance.now() - start);
      } else {
        const start = performance.now();
        const paused = await post('/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL] });
        const paused_at = performance.now();
        if (paused.status !== 'requires_action') throw new Error(`client turn: ${JSON.stringify(paused)}`);
        const runId = paused.runId as string;
        // The state's own write and read, on the run just paused (written back as it was).
        const t0 = performance.now();
        const loaded = await runs.load(runId);
        const t1 = performance.now();
        await runs.update(runId, { status: 'requires_action', state: loaded!.state, usage: loaded!.run.usage }, ['requires_action']);
        const t2 = performance.now();
        const call = (paused.requiredAction as { toolCalls: Array<{ id: string }> }).toolCalls[0]!;
        const resumeStart = performance.now();
        const done = await post(`/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: call.id, output: '{"city":"Oslo"}' }] });
        const end = performance.now();
        if (done.status !== 'completed') throw new Error(`resume: ${JSON.stringify(done)}`);
        if (keep) {
          pausedTurn.push(paused_at - start + (end - resumeStart));
          pauseRequest.push(paused_at - start);
          resumeRequest.push(end - resumeStart);
          reload.push(t1 - t0);
          persist.push(t2 - t1);
        }
      }
    }
    const ttfbOrder = round % 2 === 0 ? ['bench-agent', 'no-agent'] : ['no-agent', 'bench-agent'];
    for (const agentId of ttfbOrder) {
      const ms = await firstByte(agentId);
      if (keep) (agentId === 'no-agent' ? ttfbPlain : ttfbAgent).push(ms);
    }
  }
  const stateBytes = JSON.stringify(
    (await runs.load((await post('/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL] })).runId as string))!.state,
  ).length;
  await listener.close();
  await ctx.close();
  await llm.close();
  const ratio = (a: number[], b: number[]) => (pct(a, 50) / pct(b, 50)).toFixed(3);
  return {
    rows: [
      row(driver, 'turn with a built-in tool (1 request, 2 model calls)', builtIn),
      row(driver, 'turn with a client tool: pause + resume (2 requests, 2 model calls)', pausedTurn),
      row(driver, '  the pausing request', pauseRequest),
      row(driver, '  the resuming request', resumeRequest),
      row(driver, 'run state: write (runs.update)', persist),
      row(driver, 'run state: read (runs.load)', reload),
      row(driver, '/v1/chat stream first byte, no agent record', ttfbPlain),
      row(driver, '/v1/chat stream first byte, with an agent record', ttfbAgent),
    ],
    summary: {
      driver,
      'pause+resume / built-in (p50)': ratio(pausedTurn, builtIn),
      'pause+resume − built-in, p50 ms': (pct(pausedTurn, 50) - pct(builtIn, 50)).toFixed(2),
      'first byte with / without agent (p50)': ratio(ttfbAgent, ttfbPlain),
      'state bytes': stateBytes,
    },
  };
}

const drivers: Array<[string, Record<string, string>]> = [['pglite', {}]];
const url = process.env.BENCH_DATABASE_URL;
if (url) drivers.push(['postgres', { DATABASE_URL: url }]);
console.log(`runs bench: ${ROUNDS} rounds (+${WARMUP} warm-up) per driver, against a local scripted LLM`);
const results = [];
for (const [driver, env] of drivers) results.push(await bench(driver, env));
console.table(results.flatMap((r) => r.rows));
console.table(results.map((r) => r.summary));
