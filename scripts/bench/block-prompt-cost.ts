/**
 * Working memory's share of a turn's prompt: the blocks read (one query, and the user-template
 * check), rendered and put in the system prompt, with 0 and with 8 blocks of 2,000 characters.
 * Part of `bench:agent` (agent-overhead.ts); the bound is under 2 ms added per turn.
 */
import { performance } from 'node:perf_hooks';
import type { AppContext } from '../../src/app-context.js';
import { loadWorkingMemory } from '../../src/blocks/block-turn.js';
import { buildSystemPrompt } from '../../src/chat/system-prompt.js';

const BLOCKS = 8;
const CHARS = 2_000;

/** p50 and p95 of building one turn's system prompt over `turns` turns, with no blocks and with BLOCKS of CHARS each. */
export async function blockPromptCost(ctx: Pick<AppContext, 'blocks'>, turns: number, row: (label: string, xs: number[]) => Record<string, unknown>) {
  const store = ctx.blocks.forTenant('bench-blocks');
  for (let i = 0; i < BLOCKS; i++) {
    const scope =
      i % 3 === 0
        ? { agentId: 'bench-agent', userId: null }
        : i % 3 === 1
          ? { agentId: null, userId: 'bench-user' }
          : { agentId: 'bench-agent', userId: 'bench-user' };
    await store.put(`block-${i}`, scope, { value: 'x'.repeat(CHARS), limit: CHARS }, { type: 'api' });
  }
  const templates = [{ label: 'block-2', scope: 'user' as const }];
  const once = async (agentId: string, userId: string, into: number[], renderInto: number[]) => {
    const start = performance.now();
    const working = await loadWorkingMemory(store, { agentId, userId, runId: 'r', conversationId: 'c', templates });
    const read = performance.now();
    const tools = new Set(working.tools.map((t) => t.name));
    buildSystemPrompt({ hasKnowledge: false, tools, instructions: 'Be brief.', workingMemory: working.render(tools) });
    const end = performance.now();
    into.push(end - start);
    renderInto.push(end - read);
  };
  // Interleaved, after a warm-up, so that both see the same machine (it is shared, and noisy).
  const none: number[] = [];
  const eight: number[] = [];
  const noneRender: number[] = [];
  const eightRender: number[] = [];
  for (let turn = 0; turn < 10; turn++) {
    await once('bench-empty-agent', 'bench-empty-user', [], []);
    await once('bench-agent', 'bench-user', [], []);
  }
  for (let turn = 0; turn < turns; turn++) {
    await once('bench-empty-agent', 'bench-empty-user', none, noneRender);
    await once('bench-agent', 'bench-user', eight, eightRender);
  }
  return [
    row('turn prompt, 0 blocks (read, render, build)', none),
    row(`turn prompt, ${BLOCKS} blocks of ${CHARS} chars (read, render, build)`, eight),
    row('  of which render and build, 0 blocks', noneRender),
    row(`  of which render and build, ${BLOCKS} blocks`, eightRender),
  ];
}
