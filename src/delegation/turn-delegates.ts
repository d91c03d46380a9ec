import { addCost, addRunUsage, ZERO_RUN_USAGE } from '../runs/run-usage.js';
import { boundedAgent, parentCostOf, reservationOf } from './child-budget.js';
import { castRolesOf, delegationLimitsOf } from './cast-roles.js';
import { type ChildOutcome, type ChildRunDeps, DelegationRefusedError, resumeChild, startChild } from './child-run.js';
import { type DelegateArgs, createDelegateTool } from './delegate-tool.js';
import type { ParentAnswers, ParentMessage, ParentTurn, PendingCalls, RunToolCall, Spend, WaitingChild } from './delegation-types.js';
import { createLimiter } from './limiter.js';
import { answersFor, waitingResult } from './waiting-child.js';

const NOTHING_SPENT: Spend = { usage: ZERO_RUN_USAGE, costUsd: null };
const add = (a: Spend, b: Spend): Spend => ({ usage: addRunUsage(a.usage, b.usage), costUsd: addCost(a.costUsd, b.costUsd) });

/**
 * One turn's delegations: the `delegate` tool over the agent's cast, the children it left waiting,
 * and what they spent. Undefined when the agent has no cast and nothing waits.
 */
export function createTurnDelegates<E>(parent: ParentTurn<E>, deps: ChildRunDeps<E>) {
  const roles = castRolesOf(parent.settings);
  if (!roles && parent.waiting.length === 0) return undefined;
  const limits = delegationLimitsOf(parent.settings);
  const limit = createLimiter(limits.maxParallel);
  let ended: Spend = parent.delegatedUsage ?? NOTHING_SPENT;
  // By the parent's `delegate` call each answers.
  const waiting = new Map<string, { child: WaitingChild; spend: Spend }>(parent.waiting.map((child) => [child.toolCallId, { child, spend: NOTHING_SPENT }]));
  // The bounds of children still running, by `delegate` call: counted as spent for the next child's
  // bound, so concurrent children share what is left instead of each getting all of it.
  const reserved = new Map<string, Spend>();

  /** The parent's result for an outcome; a waiting child pauses the parent at its next step. */
  const resultOf = (outcome: ChildOutcome, role: string, before: Spend = NOTHING_SPENT): { content: string; isError: boolean } => {
    if (outcome.kind === 'failed') {
      // What it spent counts whether or not it answered: as its reply told, else as much as was known before.
      ended = add(ended, outcome.spend ?? before);
      return { content: `Error: ${role} failed: ${outcome.message}`, isError: true };
    }
    if (outcome.kind === 'completed') {
      ended = add(ended, outcome.spend);
      return { content: outcome.answer, isError: false };
    }
    waiting.set(outcome.child.toolCallId, { child: outcome.child, spend: outcome.spend });
    parent.requestPause();
    return { content: waitingResult(outcome.child), isError: false };
  };

  async function delegate(args: DelegateArgs, toolCallId: string, signal: AbortSignal): Promise<string> {
    const member = roles?.find(args.role);
    if (!member)
      throw new DelegationRefusedError(`unknown role ${JSON.stringify(args.role)}: the roles are ${roles?.names.map((n) => JSON.stringify(n)).join(', ')}`);
    const bound = (stored: Parameters<typeof boundedAgent>[0]) => {
      const agent = boundedAgent(stored, member.agentId, parent.settings, spentSoFar(), deps.budget);
      reserved.set(toolCallId, reservationOf(agent));
      return agent;
    };
    let outcome: ChildOutcome;
    try {
      outcome = await limit(() => startChild(parent, { member, role: args.role, task: args.task, toolCallId, signal, maxDepth: limits.maxDepth, bound }, deps));
    } finally {
      reserved.delete(toolCallId);
    }
    const result = resultOf(outcome, args.role);
    if (result.isError) throw new Error(result.content.replace(/^Error: /, ''));
    return result.content;
  }

  const ownSpend = (): Spend => {
    const usage = parent.spent();
    return { usage, costUsd: parentCostOf(usage, parent.settings, deps.budget) };
  };
  /** The parent's own calls, its children's (ended or waiting), and the bounds of those still running. */
  const spentSoFar = (): Spend => [...reserved.values()].reduce(add, add(ownSpend(), allChildren()));
  const allChildren = (): Spend => [...waiting.values()].reduce((sum, entry) => add(sum, entry.spend), ended);

  return {
    tools: roles ? [createDelegateTool(roles, delegate)] : [],

    async resumeWaiting(answers: ParentAnswers, messages: ParentMessage[], toolCalls: RunToolCall[]): Promise<void> {
      for (const [toolCallId, { child, spend }] of [...waiting]) {
        const given = answersFor(child, answers);
        if (!given) continue;
        waiting.delete(toolCallId);
        const result = resultOf(await resumeChild(parent, child, given, deps), child.role, spend);
        const message = messages.find((m) => m.role === 'tool' && m.toolCallId === toolCallId);
        if (message) {
          message.content = result.content;
          if (result.isError) message.isError = true;
          else delete message.isError;
        }
        const logged = toolCalls.find((call) => call.id === toolCallId);
        if (logged) Object.assign(logged, { result: result.content.slice(0, 500), isError: result.isError });
      }
      if (waiting.size > 0) parent.requestPause();
    },

    waiting: () => [...waiting.values()].map((entry) => entry.child),

    pendingWith(own: PendingCalls | undefined): PendingCalls {
      const children = [...waiting.values()].map((entry) => entry.child.pending);
      return {
        approvals: [...(own?.approvals ?? []), ...children.flatMap((p) => p.approvals)],
        clientCalls: [...(own?.clientCalls ?? []), ...children.flatMap((p) => p.clientCalls)],
      };
    },

    usage() {
      return { all: allChildren(), ended };
    },

    async abandonWaiting(): Promise<void> {
      for (const { child } of waiting.values()) await deps.turns.cancelRun(child.runId).catch(() => {});
      waiting.clear();
    },
  };
}
