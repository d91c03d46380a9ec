import type { ApprovalDecision } from '../llm/agent-loop.js';
import { RunConflictError, RunInputError, type RunState } from './run-types.js';

/**
 * A waiting child's call as its parent's answers are keyed: apart from the parent's own call of the
 * same id (providers number calls `call_0` in every run, so a lead's and its children's collide).
 */
export function childAnswerKey(childRunId: string, toolCallId: string): string {
  return `${childRunId}\u0000${toolCallId}`;
}

interface OwnedCall {
  id: string;
  /** Its key in the answers' map: the bare id for the run's own call, `childAnswerKey` for a child's. */
  key: string;
  /** The run ids an answer may name for it (a child's call: the child's, or the grandchild's that asked). */
  runs: string[];
}

/** The run's pending calls of a kind, each with its owner: its own first, then each waiting child's (as `pendingWith` lists them). */
function ownedCalls(runId: string, state: RunState, kind: 'approvals' | 'clientCalls'): OwnedCall[] {
  const children = state.waitingChildren ?? [];
  const all = state.pending[kind];
  const theirs = children.flatMap((child) =>
    child.pending[kind].map((call) => ({ id: call.id, key: childAnswerKey(child.runId, call.id), runs: [child.runId, child.calls[call.id] ?? child.runId] })),
  );
  const own = all.slice(0, all.length - theirs.length).map((call) => ({ id: call.id, key: call.id, runs: [runId] }));
  return [...own, ...theirs];
}

/**
 * The answers to a run's pending calls, every one answered once, matched on (runId, toolCallId):
 * an answer without `runId` matches by id alone, and is refused (400 naming `<field>.N.runId`) when
 * that id waits in more than one run. Keyed as `ownedCalls` says.
 */
export function answersByRun<A extends { toolCallId: string; runId?: string | undefined }, V>(
  field: 'decisions' | 'toolOutputs',
  runId: string,
  state: RunState,
  answers: readonly A[],
  value: (answer: A) => V,
): Map<string, V> {
  const calls = ownedCalls(runId, state, field === 'decisions' ? 'approvals' : 'clientCalls');
  const byKey = new Map<string, V>();
  for (const [i, answer] of answers.entries()) {
    const id = JSON.stringify(answer.toolCallId);
    const matching = calls.filter((call) => call.id === answer.toolCallId && (answer.runId === undefined || call.runs.includes(answer.runId)));
    if (matching.length > 1) {
      const runs = matching.map((call) => call.runs.at(-1)).join(', ');
      throw new RunInputError(`${field}.${i}.runId`, `is required: tool call ${id} waits in several runs (${runs}); name the run it is for`);
    }
    const call = matching[0];
    if (!call) {
      throw new RunConflictError('tool_call_not_pending', `Tool call ${id} is not waiting for an answer (unknown, or answered already)`, {
        toolCallId: answer.toolCallId,
        ...(answer.runId !== undefined ? { runId: answer.runId } : {}),
      });
    }
    if (byKey.has(call.key)) throw new RunInputError(`${field}.${i}.toolCallId`, `repeats tool call ${id}`);
    byKey.set(call.key, value(answer));
  }
  const missing = calls.filter((call) => !byKey.has(call.key)).map((call) => JSON.stringify(call.id));
  if (missing.length > 0) throw new RunInputError(field, `misses tool call${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  return byKey;
}

export type { ApprovalDecision };
