import type { ToolCall } from '../llm/messages.js';
import { childAnswerKey } from '../runs/run-answers-by-run.js';
import type { PausedReply } from '../runs/run-view.js';
import type { PendingCalls, WaitingChild } from './delegation-types.js';

/**
 * A paused child as its parent waits on it: the calls of the kind the child waits for (approvals
 * first, as a run asks for them), each with the run that asked (a grandchild's keeps its own).
 */
export function waitingChildOf(reply: PausedReply, parentCall: { toolCallId: string; role: string; agentId: string }): WaitingChild {
  const approvals: ToolCall[] = (reply.approvals ?? []).map((call) => ({ id: call.toolCallId, name: call.name, arguments: JSON.stringify(call.arguments) }));
  const clientCalls: ToolCall[] =
    reply.status === 'requires_action'
      ? (reply.requiredAction?.toolCalls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }))
      : [];
  const runs = new Map<string, string>([
    ...(reply.approvals ?? []).map((call) => [call.toolCallId, call.runId ?? reply.runId] as const),
    ...(reply.requiredAction?.toolCalls ?? []).map((call) => [call.id, call.runId ?? reply.runId] as const),
  ]);
  const pending: PendingCalls = { approvals, clientCalls };
  return {
    toolCallId: parentCall.toolCallId,
    runId: reply.runId,
    role: parentCall.role,
    agentId: parentCall.agentId,
    pending,
    calls: Object.fromEntries([...approvals, ...clientCalls].map((call) => [call.id, runs.get(call.id) ?? reply.runId])),
  };
}

/** What a parent's result says while its child waits; replaced by the child's answer once it has one. */
export function waitingResult(child: WaitingChild): string {
  return JSON.stringify({ status: 'waiting', runId: child.runId, role: child.role, note: 'the role waits for calls to be answered' });
}

/** The parent's answers meant for a child (keyed by `childAnswerKey`): its calls' decisions or outputs; undefined when none is for it. */
export function answersFor(
  child: WaitingChild,
  answers: { outputs?: ReadonlyMap<string, string>; decisions?: ReadonlyMap<string, { approve: boolean; reason?: string }> },
):
  | { decisions: Array<{ toolCallId: string; approve: boolean; reason?: string }> }
  | { toolOutputs: Array<{ toolCallId: string; output: string }> }
  | undefined {
  const decisions = child.pending.approvals.flatMap((call) => {
    const decision = answers.decisions?.get(childAnswerKey(child.runId, call.id));
    return decision ? [{ toolCallId: call.id, approve: decision.approve, ...(decision.reason !== undefined ? { reason: decision.reason } : {}) }] : [];
  });
  if (decisions.length > 0) return { decisions };
  const toolOutputs = child.pending.clientCalls.flatMap((call) => {
    const output = answers.outputs?.get(childAnswerKey(child.runId, call.id));
    return output !== undefined ? [{ toolCallId: call.id, output }] : [];
  });
  return toolOutputs.length > 0 ? { toolOutputs } : undefined;
}
