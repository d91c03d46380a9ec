import { randomUUID } from 'node:crypto';
import type { AgentStore } from '../agents/agent-store.js';
import type { Agent } from '../agents/agent-config.js';
import type { CastMember } from '../agents/cast-settings.js';
import type { BudgetContext } from './child-budget.js';
import type { ChildConversations } from './child-conversations.js';
import type { ChildReply, ChildResumeRequest, ChildTurns, ParentTurn, Spend, WaitingChild } from './delegation-types.js';
import { lineageDepthLimit } from './lineage-depth.js';
import { waitingChildOf } from './waiting-child.js';

export interface ChildRunDeps<E> {
  turns: ChildTurns<E>;
  agents: Pick<AgentStore, 'get'> | undefined;
  conversations: ChildConversations | undefined;
  budget: BudgetContext;
}

/** How a child run came out, as its parent's `delegate` result is made of it. */
export type ChildOutcome =
  | { kind: 'completed'; runId: string; answer: string; spend: Spend }
  | { kind: 'waiting'; child: WaitingChild; spend: Spend }
  /** `spend`: what a child that stopped short spent, where its reply told it. */
  | { kind: 'failed'; runId: string; message: string; spend?: Spend };

/** Refused before any run starts (a cycle, the depth limit, an unknown role): told to the model as the tool's error. */
export class DelegationRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DelegationRefusedError';
  }
}

/** The agents above a parent (the top one first), its own last. */
export const stackOf = (parent: Pick<ParentTurn<unknown>, 'lineage' | 'agentId'>): string[] => parent.lineage?.stack ?? [parent.agentId];

/**
 * Runs the role's agent on the task as a child of the parent's run, in a conversation of its own
 * linked to the parent's, for the same user; the parent's signal cancels it.
 */
export async function startChild<E>(
  parent: ParentTurn<E>,
  call: {
    member: CastMember;
    role: string;
    task: string;
    toolCallId: string;
    signal: AbortSignal;
    maxDepth: number;
    /** The role's agent bounded by the parent's budget; called once, synchronously before the run starts, so it can reserve the bound. */
    bound: (stored: Agent | null) => Agent | null;
  },
  deps: ChildRunDeps<E>,
): Promise<ChildOutcome> {
  const { member, role } = call;
  const stack = stackOf(parent);
  if (stack.includes(member.agentId)) throw new DelegationRefusedError(`cycle: ${role} is already running this task`);
  const depth = await lineageDepthLimit(stack, call.maxDepth, deps.agents);
  if (stack.length > depth.maxDepth) {
    const whose = depth.setBy === undefined ? "this agent's" : `${depth.setBy}'s`;
    throw new DelegationRefusedError(`depth: ${role} would run ${stack.length} delegations deep, past ${whose} maxDepth of ${depth.maxDepth}`);
  }
  const stored = deps.agents ? await deps.agents.get(member.agentId) : null;
  const agent = call.bound(stored);
  const runId = randomUUID();
  const conversationId = randomUUID();
  await deps.conversations?.open({
    id: conversationId,
    agentId: member.agentId,
    userId: parent.userId,
    parentConversationId: parent.conversationId,
    task: call.task,
  });
  parent.emit({ type: 'delegate_start', role, agentId: member.agentId, runId });
  const reply = await settle(runId, parent, () =>
    deps.turns.chat({
      message: call.task,
      agentId: member.agentId,
      ...(parent.userId !== null ? { userId: parent.userId } : {}),
      conversationId,
      runId,
      agent,
      lineage: { parentRunId: parent.runId, role, stack: [...stack, member.agentId] },
      ...listenerOf(parent, runId, call.signal),
    }),
  );
  return outcomeOf(reply, runId, { toolCallId: call.toolCallId, role, agentId: member.agentId });
}

/** Goes on with a waiting child, given the answers meant for it. */
export async function resumeChild<E>(
  parent: ParentTurn<E>,
  child: WaitingChild,
  answers: Pick<ChildResumeRequest<E>, 'decisions' | 'toolOutputs'>,
  deps: Pick<ChildRunDeps<E>, 'turns'>,
): Promise<ChildOutcome> {
  const reply = await settle(child.runId, parent, () =>
    deps.turns.resume({ runId: child.runId, ...answers, ...listenerOf(parent, child.runId, parent.signal) }),
  );
  return outcomeOf(reply, child.runId, child);
}

function listenerOf<E>(parent: ParentTurn<E>, runId: string, signal: AbortSignal) {
  return {
    signal,
    stream: parent.stream,
    ...(parent.stream ? { onEvent: (event: E) => parent.emit({ type: 'child', runId, event }) } : {}),
  };
}

/** The child's reply, or its failure as a reply-like outcome; `delegate_end` told either way. A parent's cancel goes on up. */
async function settle<E>(runId: string, parent: ParentTurn<E>, run: () => Promise<ChildReply>): Promise<ChildReply | { failed: string }> {
  try {
    const reply = await run();
    parent.emit({ type: 'delegate_end', runId, status: reply.status });
    return reply;
  } catch (error) {
    parent.emit({ type: 'delegate_end', runId, status: parent.signal.aborted ? 'cancelled' : 'failed' });
    if (parent.signal.aborted) throw error;
    return { failed: error instanceof Error ? error.message : String(error) };
  }
}

function outcomeOf(reply: ChildReply | { failed: string }, runId: string, call: { toolCallId: string; role: string; agentId: string }): ChildOutcome {
  if ('failed' in reply) return { kind: 'failed', runId, message: reply.failed };
  const spend = { usage: reply.usage, costUsd: reply.costUsd };
  if (reply.status === 'completed') return { kind: 'completed', runId, answer: reply.answer, spend };
  if (reply.status === 'paused') {
    return { kind: 'failed', runId, message: `run ${runId} was paused on request: resume it (POST /v1/runs/${runId}/resume)`, spend };
  }
  return { kind: 'waiting', child: waitingChildOf(reply, call), spend };
}
