/**
 * Conversation compaction over a long chat: tokens sent to the model per turn with and without
 * compaction, and the time compaction adds to a turn. Each run drives the chat's own pipeline
 * (stored conversation, compaction hook before every LLM call, append, background checkpoint)
 * against a scripted OpenAI-compatible server on 127.0.0.1 that answers at once: each turn is one
 * tool call with a bulky result, then an answer. Tokens are the compactor's own estimate of each
 * request (messages plus tool definitions).
 *
 *   npm run bench:compaction        (BENCH_TURNS, default 200; BENCH_WINDOW, default 8192)
 */
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import type { AgentHooks } from '../../src/agent/agent-loop.js';
import { runAgentTurn } from '../../src/agent/agent-loop.js';
import { createLlmProvider } from '../../src/agent/llm-provider.js';
import { defineTool, toToolSpec } from '../../src/agent/tool.js';
import { buildSystemPrompt } from '../../src/chat/system-prompt.js';
import { beginConversationTurn } from '../../src/chat/conversation-turn.js';
import { createBackgroundTasks } from '../../src/background/background-tasks.js';
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS, compactionLimit } from '../../src/compaction/compaction-config.js';
import { createLlmSummarizer } from '../../src/compaction/summarizer.js';
import { estimateToolSpecTokens } from '../../src/compaction/token-estimate.js';
import { createAfterTurnHooks } from '../../src/conversations/after-turn-hooks.js';
import { createCheckpointHook } from '../../src/conversations/checkpoint-hook.js';
import { createPgConversationStore } from '../../src/conversations/pg-conversation-store.js';
import { openDatabase } from '../../src/db/database.js';
import { DEFAULT_TENANT_ID } from '../../src/tenancy/tenant-id.js';
import { conversationModel, kindOf, requestTokens } from '../../testkit/scripted-conversation-llm.js';
import { startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 200);
const WINDOW = Number(process.env.BENCH_WINDOW ?? DEFAULT_COMPACTION_SETTINGS.contextWindow);

const NOTE = 'The quarterly report lists revenue by region, staffing changes and the open risks for each team. ';
const searchNotes = defineTool({
  name: 'search_memories',
  description: "Semantic search over the user's saved memories. Results are numbered sources you can cite as [n].",
  parameters: z.object({ query: z.string(), topK: z.number().int().optional() }),
  // About 400 estimated tokens, like three recalled memories.
  execute: ({ query }) => `<sources>\n<source id="1" kind="memory" key="notes">\n${query}: ${NOTE.repeat(14)}\n</source>\n</sources>`,
});

interface RunResult {
  /** Estimated tokens of all chat requests of each turn. */
  tokensPerTurn: number[];
  /** Largest single request of each turn. */
  maxRequestPerTurn: number[];
  /** Time spent in the compaction hook per turn (ms), all LLM calls of the turn together. */
  compactionMsPerTurn: number[];
  /** Time of the whole turn on the reply path (ms): load, LLM calls, tools, compaction, append. */
  turnMs: number[];
  summaryCalls: number;
  checkpointCalls: number;
  strategies: Map<string, number>;
}

async function run(settings: CompactionSettings): Promise<RunResult> {
  const database = await openDatabase({});
  const llm = await startScriptedLlmServer(conversationModel());
  const provider = createLlmProvider({ baseURL: llm.url, apiKey: 'bench', model: 'scripted' });
  const store = createPgConversationStore({ db: database.db });
  const tasks = createBackgroundTasks((key, error) => console.error(key, error));
  const summarizer = createLlmSummarizer(provider, { timeoutMs: 20_000 });
  const afterTurn = createAfterTurnHooks([createCheckpointHook({ compaction: settings, summaryTimeoutMs: 20_000 })], tasks);
  const toolTokens = estimateToolSpecTokens([toToolSpec(searchNotes)]);
  const systemPrompt = buildSystemPrompt({ hasKnowledge: false });
  const conversationId = crypto.randomUUID();
  const checkpoints = afterTurn.forConversation({ tenantId: DEFAULT_TENANT_ID, store, conversationId, agentId: 'bench', userId: null, llm: provider });
  const result: RunResult = { tokensPerTurn: [], maxRequestPerTurn: [], compactionMsPerTurn: [], turnMs: [], summaryCalls: 0, checkpointCalls: 0, strategies: new Map() };

  for (let n = 1; n <= TURNS; n++) {
    const question = n === 3 ? 'Please remember that my locker code is 4512.' : `Turn ${n}: what do my notes say about project ${n % 23}?`;
    const firstRequest = llm.requests.length;
    let compactionMs = 0;
    const started = performance.now();
    const turn = await beginConversationTurn({
      store,
      afterTurn: checkpoints,
      conversationId,
      agentId: 'bench',
      userId: null,
      settings,
      summarizer,
      onCompaction: (report) => result.strategies.set(report.strategy, (result.strategies.get(report.strategy) ?? 0) + 1),
    });
    const hook = turn.compactionHook(toolTokens);
    const timed: AgentHooks = {
      async beforeLlm(messages) {
        const start = performance.now();
        try {
          return await hook.beforeLlm!(messages);
        } finally {
          compactionMs += performance.now() - start;
        }
      },
    };
    const reply = await runAgentTurn({
      provider,
      systemPrompt,
      // As the chat sends it: the question with its recalled sources.
      messages: [...turn.history, { role: 'user', content: `<sources>\n<source id="1" kind="memory" key="n">\n${NOTE.repeat(3)}\n</source>\n</sources>\n\nQuestion:\n${question}` }],
      tools: [searchNotes],
      hooks: timed,
      stream: false,
    });
    await turn.finish([{ message: { role: 'user', content: question } }, ...reply.newMessages.map((message) => ({ message }))]);
    result.turnMs.push(performance.now() - started);
    result.compactionMsPerTurn.push(compactionMs);
    // The next user message comes after the background checkpoint, as it would in a real chat.
    await tasks.whenIdle();

    const chats = llm.requests.slice(firstRequest).filter((r) => kindOf(r) === 'chat');
    const sizes = chats.map(requestTokens);
    result.tokensPerTurn.push(sizes.reduce((a, b) => a + b, 0));
    result.maxRequestPerTurn.push(Math.max(...sizes));
  }
  result.summaryCalls = llm.requests.filter((r) => kindOf(r) === 'summary').length;
  result.checkpointCalls = llm.requests.filter((r) => kindOf(r) === 'checkpoint').length;
  await tasks.close();
  await llm.close();
  await database.close();
  return result;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const ms = (x: number) => x.toFixed(2);

const compacted: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: WINDOW };
// A window no conversation here reaches: the trigger never fires, so every request carries the whole history.
const uncompacted: CompactionSettings = { ...compacted, contextWindow: 100_000_000 };

console.log(`compaction bench: ${TURNS} turns (1 tool call + answer each), window ${WINDOW}, limit ${compactionLimit(compacted)} estimated tokens`);
const without = await run(uncompacted);
const withC = await run(compacted);

const sample = [1, 5, 10, 25, 50, 75, 100, 150, 200].filter((t) => t <= TURNS);
console.log('\nTokens sent to the model per turn (both LLM calls of the turn), and the largest single request:');
console.table(
  sample.map((t) => ({
    turn: t,
    'without: tokens/turn': without.tokensPerTurn[t - 1],
    'without: largest request': without.maxRequestPerTurn[t - 1],
    'with: tokens/turn': withC.tokensPerTurn[t - 1],
    'with: largest request': withC.maxRequestPerTurn[t - 1],
  })),
);
const total = (r: RunResult) => r.tokensPerTurn.reduce((a, b) => a + b, 0);
console.log('\nWhole conversation:');
console.table([
  {
    run: 'without compaction',
    'tokens sent': total(without),
    'largest request': Math.max(...without.maxRequestPerTurn),
    'requests over the limit': without.maxRequestPerTurn.filter((x) => x > compactionLimit(compacted)).length,
    'summary LLM calls': without.summaryCalls,
    'checkpoint LLM calls': without.checkpointCalls,
  },
  {
    run: 'with compaction',
    'tokens sent': total(withC),
    'largest request': Math.max(...withC.maxRequestPerTurn),
    'requests over the limit': withC.maxRequestPerTurn.filter((x) => x > compactionLimit(compacted)).length,
    'summary LLM calls': withC.summaryCalls,
    'checkpoint LLM calls': withC.checkpointCalls,
  },
]);
console.log('\nTime per turn on the reply path (ms; the scripted model answers at once, so summary calls cost only their round trip):');
console.table([
  { measure: 'compaction hook, without (prompt under the trigger)', mean: ms(mean(without.compactionMsPerTurn)), p50: ms(pct(without.compactionMsPerTurn, 50)), p95: ms(pct(without.compactionMsPerTurn, 95)), max: ms(Math.max(...without.compactionMsPerTurn)) },
  { measure: 'compaction hook, with', mean: ms(mean(withC.compactionMsPerTurn)), p50: ms(pct(withC.compactionMsPerTurn, 50)), p95: ms(pct(withC.compactionMsPerTurn, 95)), max: ms(Math.max(...withC.compactionMsPerTurn)) },
  { measure: 'whole turn, without', mean: ms(mean(without.turnMs)), p50: ms(pct(without.turnMs, 50)), p95: ms(pct(without.turnMs, 95)), max: ms(Math.max(...without.turnMs)) },
  { measure: 'whole turn, with', mean: ms(mean(withC.turnMs)), p50: ms(pct(withC.turnMs, 50)), p95: ms(pct(withC.turnMs, 95)), max: ms(Math.max(...withC.turnMs)) },
]);
console.log('Compaction strategy of each compacted LLM call (the strongest stage it needed):', Object.fromEntries(withC.strategies));
