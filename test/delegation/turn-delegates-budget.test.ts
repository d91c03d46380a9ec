import { describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../src/agents/agent-config.js';
import type { ChildTurnRequest, ParentTurn } from '../../src/delegation/delegation-types.js';
import { createTurnDelegates } from '../../src/delegation/turn-delegates.js';
import { childAnswerKey } from '../../src/runs/run-answers-by-run.js';
import type { RunUsage } from '../../src/runs/run-types.js';
import type { PausedReply } from '../../src/runs/run-view.js';

/** The bound each child of a lead with a budget gets: what is left of the lead's, its own calls and its other children's counted. */

const usage = (totalTokens: number, promptTokens = totalTokens, completionTokens = 0): RunUsage => ({ promptTokens, completionTokens, totalTokens });

function lead(settings: Omit<AgentSettings, 'name'>, spent: RunUsage): ParentTurn<unknown> {
  return {
    runId: 'lead-run',
    conversationId: 'lead-conversation',
    agentId: 'lead',
    userId: 'u1',
    settings: { name: 'lead', ...settings },
    lineage: undefined,
    signal: new AbortController().signal,
    emit: () => {},
    stream: false,
    spent: () => spent,
    requestPause: () => {},
    waiting: [],
    delegatedUsage: undefined,
  };
}

/** Children that answer when `finish()` is called, each having spent `spend`; `asked` holds their requests. */
function heldChildren(spend: { usage: RunUsage; costUsd: number | null }) {
  const asked: ChildTurnRequest<unknown>[] = [];
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const turns = {
    chat: async (request: ChildTurnRequest<unknown>) => {
      asked.push(request);
      await finished;
      return { runId: request.runId, status: 'completed' as const, answer: `${request.agentId} done`, ...spend };
    },
    resume: async () => {
      throw new Error('not paused');
    },
    cancelRun: async () => {},
  };
  return { asked, finish, turns };
}

const cast = [
  { agentId: 'a', description: 'does A' },
  { agentId: 'b', description: 'does B' },
];
const run = (delegates: ReturnType<typeof createTurnDelegates>, role: string, id: string) =>
  delegates!.tools[0]!.execute({ role, task: `Task ${role}` }, { signal: new AbortController().signal, toolCallId: id });
const until = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 1));
};

describe('the budget a lead hands its children', () => {
  it('parallel delegations each got the whole remaining budget: a running child holds its bound back from the next', async () => {
    const children = heldChildren({ usage: usage(10), costUsd: null });
    const delegates = createTurnDelegates(lead({ cast, budget: { maxTokens: 100 } }, usage(20)), {
      turns: children.turns,
      agents: { get: async (id) => ({ id, name: id, version: 1, createdAt: new Date(0), updatedAt: new Date(0), budget: { maxTokens: 30 } }) },
      conversations: undefined,
      budget: { prices: undefined, defaultModel: 'm' },
    });
    const first = run(delegates, 'a', 'd1');
    await until(() => children.asked.length === 1);
    const second = run(delegates, 'b', 'd2');
    await until(() => children.asked.length === 2);
    // 80 left: `a` holds its 30 while it runs, so `b` may spend at most its own 30 of the 50 left, not 80.
    expect(children.asked.map((r) => r.agent?.budget)).toEqual([{ maxTokens: 30 }, { maxTokens: 30 }]);

    const third = run(delegates, 'a', 'd3');
    await until(() => children.asked.length === 3);
    // 80 less the two running children's 30 each: 20.
    expect(children.asked[2]!.agent?.budget).toEqual({ maxTokens: 20 });
    children.finish();
    await Promise.all([first, second, third]);

    // Ended, each child counts what it spent (10), not its bound: 80 - 30 = 50 left.
    await run(delegates, 'b', 'd4');
    expect(children.asked[3]!.agent?.budget).toEqual({ maxTokens: 30 });
    expect(delegates!.usage().all.usage.totalTokens).toBe(40);
  });

  it("refuses a delegation while running children's bounds hold all that is left", async () => {
    const children = heldChildren({ usage: usage(5), costUsd: null });
    const delegates = createTurnDelegates(lead({ cast, budget: { maxTokens: 100 } }, usage(20)), {
      turns: children.turns,
      agents: { get: async () => null },
      conversations: undefined,
      budget: { prices: undefined, defaultModel: 'm' },
    });
    const first = run(delegates, 'a', 'd1');
    await until(() => children.asked.length === 1);
    expect(children.asked[0]!.agent?.budget).toEqual({ maxTokens: 80 });
    await expect(run(delegates, 'b', 'd2')).rejects.toThrow(/token budget is spent/);
    children.finish();
    await first;
  });

  it("the lead's own dollar cost was dropped from the child's bound once a child had ended", async () => {
    // $1 per million tokens each way: the lead's own 200,000 tokens cost $0.20.
    const prices = { m: { inputPerMTok: 1, outputPerMTok: 1 } };
    const children = heldChildren({ usage: usage(100_000), costUsd: 0.1 });
    const delegates = createTurnDelegates(lead({ cast, model: 'm', budget: { maxUsd: 1 } }, usage(200_000)), {
      turns: children.turns,
      agents: { get: async () => null },
      conversations: undefined,
      budget: { prices, defaultModel: 'm' },
    });
    children.finish();
    await run(delegates, 'a', 'd1');
    expect(children.asked[0]!.agent?.budget?.maxUsd).toBeCloseTo(0.8);
    await run(delegates, 'b', 'd2');
    // $1 less the lead's own $0.20 and the ended child's $0.10.
    expect(children.asked[1]!.agent?.budget?.maxUsd).toBeCloseTo(0.7);
  });
});

describe('what a child that stopped short spent', () => {
  const pausedReply = (runId: string, status: PausedReply['status'], totalTokens: number): PausedReply => ({
    runId,
    status,
    conversationId: `${runId}-conversation`,
    ...(status === 'requires_action'
      ? {
          requiredAction: {
            type: 'submit_tool_outputs' as const,
            toolCalls: [{ id: 'c1', type: 'function' as const, function: { name: 'ask', arguments: '{}' } }],
          },
        }
      : {}),
    toolCalls: [],
    usage: usage(totalTokens),
    costUsd: null,
    expiresAt: new Date(0).toISOString(),
  });

  it("a child paused on request or failing after a wait lost what it had spent from the lead's totals", async () => {
    const turns = {
      chat: async (request: ChildTurnRequest<unknown>) =>
        pausedReply(request.runId, request.agentId === 'a' ? 'paused' : 'requires_action', request.agentId === 'a' ? 25 : 40),
      resume: async () => {
        throw new Error('the model went away');
      },
      cancelRun: async () => {},
    };
    const delegates = createTurnDelegates(lead({ cast }, usage(0)), {
      turns,
      agents: { get: async () => null },
      conversations: undefined,
      budget: { prices: undefined, defaultModel: 'm' },
    });
    await expect(run(delegates, 'a', 'd1')).rejects.toThrow(/paused on request/);
    expect(delegates!.usage().ended.usage.totalTokens).toBe(25);

    await run(delegates, 'b', 'd2');
    const [waiting] = delegates!.waiting();
    const messages = [{ role: 'tool', toolCallId: 'd2', content: 'waiting' }];
    await delegates!.resumeWaiting({ outputs: new Map([[childAnswerKey(waiting!.runId, 'c1'), 'answer']]) }, messages, []);
    expect(messages[0]).toMatchObject({ isError: true, content: expect.stringMatching(/the model went away/) });
    // The failed resume told nothing of the child's spend: the 40 its pause reported still count.
    expect(delegates!.usage()).toMatchObject({ all: { usage: { totalTokens: 65 } }, ended: { usage: { totalTokens: 65 } } });
  });
});
