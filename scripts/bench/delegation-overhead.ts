/**
 * A delegation's own cost: the child run's set-up and teardown (the role's agent read, its
 * conversation opened, its run recorded and ended, its reply made the tool's result), without the
 * model's time. Against a scripted OpenAI-compatible server on 127.0.0.1 that answers at once, on
 * the embedded default (PGlite in memory):
 *
 *   plain turn      a turn of the worker agent alone (one model call): what a child's turn is
 *   delegate call   the lead's `delegate` call, from its tool_start to its tool_end: a child turn
 *                   of the same worker, plus the delegation around it
 *   overhead        delegate call - plain turn, per pair of turns run back to back (p50 of those)
 *
 *   npx tsx scripts/bench/delegation-overhead.ts        (BENCH_TURNS, default 50)
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type ScriptedRequest, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 50);
const WARM_UP = Math.min(5, Math.floor(TURNS / 5));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const row = (label: string, xs: number[]) => ({ measure: label, 'p50 ms': pct(xs, 50).toFixed(3), 'p95 ms': pct(xs, 95).toFixed(3), n: xs.length });

const systemOf = (request: ScriptedRequest) => String(request.body.messages.find((m) => m.role === 'system')?.content ?? '');
const hasToolResult = (request: ScriptedRequest) => request.body.messages.some((m) => m.role === 'tool');

console.log(
  `machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the start`,
);

// The lead delegates, then answers once it has the result; the worker answers at once.
const llm = await startScriptedLlmServer((request) => {
  if (systemOf(request).includes('[WORKER]')) return reply.text('Done: the task is finished.');
  if (hasToolResult(request)) return reply.text('The worker finished it.');
  return reply.toolCalls([{ name: 'delegate', arguments: JSON.stringify({ role: 'worker', task: 'Finish the task' }) }]);
});
const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' });
const ctx = await createAppContext(config, {
  embedder: createHashEmbedder(64),
  llm: createLlmProvider({ baseURL: llm.url, apiKey: 'bench', model: 'scripted' }),
});
const agents = ctx.agents.forTenant('default');
// Recalls nothing: a plain turn and a child turn then do the same work, whatever the turns stored so far.
await agents.create('worker', { name: 'Worker', instructions: '[WORKER] Do the task.', recall: { memoryTopK: 0, knowledgeTopK: 0, turnTopK: 0 } });
await agents.create('lead', { name: 'Lead', instructions: '[LEAD] Delegate.', cast: [{ agentId: 'worker', description: 'does the task' }] });
const chat = ctx.chat.forTenant('default');

const plain: number[] = [];
const delegated: number[] = [];
const overhead: number[] = [];
for (let i = 0; i < TURNS; i++) {
  // Each measured with no work of the turn before still running after its reply (indexing, checkpoints).
  await ctx.backgroundTasks.whenIdle();
  let start = performance.now();
  const worker = await chat.chat({ message: 'Finish the task', agentId: 'worker', userId: 'bench' });
  const plainMs = performance.now() - start;
  if (worker.status !== 'completed') throw new Error(`the worker's turn ended ${worker.status}`);

  let delegateMs = Number.NaN;
  start = 0;
  await ctx.backgroundTasks.whenIdle();
  const lead = await chat.chat({
    message: 'Get it done',
    agentId: 'lead',
    userId: 'bench',
    onEvent: (event) => {
      if (event.type === 'tool_start' && event.name === 'delegate') start = performance.now();
      if (event.type === 'tool_end' && event.name === 'delegate') delegateMs = performance.now() - start;
    },
  });
  if (lead.status !== 'completed' || lead.toolCalls[0]?.isError) throw new Error(`the lead's turn ended ${lead.status}: ${JSON.stringify(lead.toolCalls)}`);
  if (i < WARM_UP) continue;
  plain.push(plainMs);
  delegated.push(delegateMs);
  overhead.push(delegateMs - plainMs);
}
await ctx.backgroundTasks.whenIdle();

console.table([
  row('plain turn (one model call)', plain),
  row('delegate call (a child turn and its delegation)', delegated),
  row("a delegation's own overhead (delegate call - plain turn)", overhead),
]);
console.log(`target: overhead p50 <= 15 ms on the embedded default; measured ${pct(overhead, 50).toFixed(3)} ms`);
await ctx.close();
await llm.close();
