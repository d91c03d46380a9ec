import { waitingChildOf } from '../delegation/waiting-child.js';
import type { RunState } from '../runs/run-types.js';
import { addCost, addRunUsage } from '../runs/run-usage.js';
import type { PausedReply } from '../runs/run-view.js';
import type { WorkflowOutcome, WorkflowProgress } from './workflow-runner.js';

/** A workflow run's reply (`POST /v1/workflows/{id}/runs`, and an answer to its pause). */
export interface WorkflowRunReply {
  runId: string;
  workflowId: string;
  version: number;
  status: 'completed' | 'failed' | 'cancelled' | 'requires_approval' | 'requires_action';
  output: string | null;
  path: string[];
  steps: WorkflowProgress['steps'];
  stopReason: WorkflowOutcome['stopReason'] | 'cancelled';
  usage: WorkflowProgress['usage'];
  costUsd: number | null;
  error?: { code: string; message: string };
  /** A paused run: the waiting step's calls, each with the step's `runId`; answer them through this run. */
  approvals?: PausedReply['approvals'];
  requiredAction?: PausedReply['requiredAction'];
  expiresAt?: string;
}

/** What a paused workflow run keeps in its run's state, beside the pending calls its step waits on. */
export interface PausedWorkflow {
  workflowId: string;
  version: number;
  progress: WorkflowProgress;
  waitingStep: { node: string; runId: string };
}

/** The run of a workflow is a run like a chat turn's: its agent is `workflow:<id>`, its steps its children. */
export const workflowAgentId = (workflowId: string) => `workflow:${workflowId}`;

/** Whether a run's stored state is a paused workflow's (answered through the workflow, not the chat). */
export const isWorkflowState = (state: unknown): boolean => typeof state === 'object' && state !== null && 'workflow' in state;

type Base = Pick<WorkflowRunReply, 'workflowId' | 'version'>;

/** The reply of a run as it ended or paused (a pause's calls added by `pausedReplyFields`). */
export function replyOf(runId: string, base: Base, outcome: WorkflowOutcome): WorkflowRunReply {
  const { progress } = outcome;
  return {
    runId,
    ...base,
    status: outcome.status === 'paused' ? (outcome.waiting!.reply.status as 'requires_approval' | 'requires_action') : outcome.status,
    output: progress.steps.at(-1)?.output ?? null,
    path: progress.steps.map((step) => step.node),
    steps: progress.steps,
    stopReason: outcome.stopReason,
    usage: progress.usage,
    costUsd: progress.costUsd,
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/** A paused run's reply fields: the waiting step's calls, each with the step's run, and its usage so far. */
export function pausedReplyFields(outcome: WorkflowOutcome): Partial<WorkflowRunReply> {
  const { reply } = outcome.waiting!;
  return {
    usage: addRunUsage(outcome.progress.usage, reply.usage),
    costUsd: addCost(outcome.progress.costUsd, reply.costUsd),
    ...(reply.approvals ? { approvals: reply.approvals.map((a) => ({ ...a, runId: a.runId ?? reply.runId })) } : {}),
    ...(reply.requiredAction
      ? { requiredAction: { ...reply.requiredAction, toolCalls: reply.requiredAction.toolCalls.map((c) => ({ ...c, runId: c.runId ?? reply.runId })) } }
      : {}),
  };
}

/**
 * What a paused run stores: its step's pending calls as its own (so the runs API lists and checks
 * them, each with the step's run), and the workflow's progress to go on from.
 */
export function pausedState(base: Base, outcome: WorkflowOutcome): RunState {
  const waiting = outcome.waiting!;
  const child = waitingChildOf(waiting.reply, { toolCallId: waiting.node, role: waiting.node, agentId: waiting.agentId });
  const workflow: PausedWorkflow = { ...base, progress: outcome.progress, waitingStep: { node: waiting.node, runId: waiting.reply.runId } };
  return { pending: child.pending, waitingChildren: [child], workflow } as unknown as RunState;
}
