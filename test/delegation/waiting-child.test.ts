import { describe, expect, it } from 'vitest';
import { answersFor, waitingChildOf } from '../../src/delegation/waiting-child.js';
import { childAnswerKey } from '../../src/runs/run-answers-by-run.js';
import type { PausedReply } from '../../src/runs/run-view.js';

const paused = (over: Partial<PausedReply>): PausedReply => ({
  runId: 'child-run',
  status: 'requires_approval',
  conversationId: 'c',
  toolCalls: [],
  usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
  costUsd: null,
  expiresAt: new Date(0).toISOString(),
  ...over,
});

describe('a paused child as its parent waits on it', () => {
  it("lists the child's approvals, each with the run that asked (a grandchild's keeps its own)", () => {
    const child = waitingChildOf(
      paused({
        approvals: [
          { toolCallId: 'k1', name: 'delete_memory', arguments: { key: 'x' } },
          { toolCallId: 'g1', name: 'delete_memory', arguments: { key: 'y' }, runId: 'grandchild-run' },
        ],
      }),
      { toolCallId: 'd1', role: 'keeper', agentId: 'keeper' },
    );
    expect(child).toMatchObject({ toolCallId: 'd1', runId: 'child-run', role: 'keeper', calls: { k1: 'child-run', g1: 'grandchild-run' } });
    expect(child.pending.approvals.map((c) => [c.id, JSON.parse(c.arguments)])).toEqual([
      ['k1', { key: 'x' }],
      ['g1', { key: 'y' }],
    ]);
    expect(child.pending.clientCalls).toEqual([]);
  });

  it('hands a child the answers for its own calls only, decisions before outputs', () => {
    const child = waitingChildOf(
      paused({
        status: 'requires_action',
        requiredAction: { type: 'submit_tool_outputs', toolCalls: [{ id: 't1', type: 'function', function: { name: 'where', arguments: '{}' } }] },
      }),
      { toolCallId: 'd1', role: 'r', agentId: 'a' },
    );
    expect(answersFor(child, { outputs: new Map([['other', 'x']]) })).toBeUndefined();
    expect(
      answersFor(child, {
        outputs: new Map([
          [childAnswerKey('child-run', 't1'), 'Oslo'],
          ['t1', "the lead's own t1"],
          ['other', 'x'],
        ]),
      }),
    ).toEqual({ toolOutputs: [{ toolCallId: 't1', output: 'Oslo' }] });
  });
});
