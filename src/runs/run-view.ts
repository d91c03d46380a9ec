import type { PendingCalls } from '../llm/agent-loop.js';
import { toolArgumentsOf } from '../llm/tool-arguments.js';
import type { Run, RunState, RunToolCall, RunUsage } from './run-types.js';

/** A call the client is asked to run, in OpenAI's shape. */
export interface RequiredToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** A delegation's call its parent lists as its own: the run that asked for it. */
  runId?: string;
}

export interface ApprovalRequest {
  toolCallId: string;
  name: string;
  /** As the tool would get them: parsed (repaired when almost-JSON), else the raw text. */
  arguments: unknown;
  /** A delegation's call its parent lists as its own: the run that asked for it. */
  runId?: string;
}

/** A turn waiting for the client: its tools' outputs, a person's decisions, or a resume (`paused` on request). */
export interface PausedReply {
  runId: string;
  status: 'requires_action' | 'requires_approval' | 'paused';
  conversationId: string;
  requiredAction?: { type: 'submit_tool_outputs'; toolCalls: RequiredToolCall[] };
  approvals?: ApprovalRequest[];
  toolCalls: RunToolCall[];
  usage: RunUsage;
  costUsd: number | null;
  /** Past this time the run expires, unless answered. */
  expiresAt: string;
}

/** A run as `GET /v1/runs/:id` shows it: what it is waiting for, when it waits. */
export type RunView = Omit<Run, 'expiresAt' | 'createdAt' | 'updatedAt'> & {
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  requiredAction?: PausedReply['requiredAction'];
  approvals?: ApprovalRequest[];
  /** The runs started under this one (delegations, a workflow's steps), oldest first. */
  children?: RunChild[];
  /** The model's reasoning over the turn so far (a paused run) or whole (an ended one); only when the reader asked for it. */
  reasoning?: string;
};

/** A run under another, as its parent's view lists it. */
export interface RunChild {
  runId: string;
  agentId: string;
  role: string | null;
  status: Run['status'];
  usage: RunUsage;
}

/**
 * The run each pending call of a paused run belongs to, by position (undefined: the run's own):
 * by position, not id, because a lead's and its children's calls may share an id (`call_0`).
 */
export interface CallRuns {
  approvals: ReadonlyArray<string | undefined>;
  clientCalls: ReadonlyArray<string | undefined>;
}

/** Where each call a paused run lists comes from: its own first, then each waiting delegation's by the run that asked. */
export function callRunsOf(state: Pick<RunState, 'waitingChildren' | 'pending'> | null | undefined): CallRuns {
  const of = (kind: 'approvals' | 'clientCalls'): Array<string | undefined> => {
    const theirs = (state?.waitingChildren ?? []).flatMap((child) => child.pending[kind].map((call) => child.calls[call.id] ?? child.runId));
    const own = Math.max(0, (state?.pending[kind].length ?? 0) - theirs.length);
    return [...Array.from({ length: own }, () => undefined), ...theirs];
  };
  return { approvals: of('approvals'), clientCalls: of('clientCalls') };
}

export function pausedReply(input: {
  runId: string;
  conversationId: string;
  status: PausedReply['status'];
  pending: PendingCalls;
  toolCalls: RunToolCall[];
  usage: RunUsage;
  costUsd: number | null;
  expiresAt: Date;
  callRuns?: CallRuns;
}): PausedReply {
  return {
    runId: input.runId,
    status: input.status,
    conversationId: input.conversationId,
    ...waitingFor(input.status, input.pending, input.callRuns),
    toolCalls: input.toolCalls,
    usage: input.usage,
    costUsd: input.costUsd,
    expiresAt: input.expiresAt.toISOString(),
  };
}

/** `reasoning`: the run's kept reasoning, shown only when given (the reader asked for it). */
export function runView(run: Run, state: RunState | null, children?: readonly Run[], reasoning?: string): RunView {
  return {
    ...run,
    expiresAt: run.expiresAt?.toISOString() ?? null,
    createdAt: run.createdAt.toISOString(),
    updatedAt: run.updatedAt.toISOString(),
    ...(state ? waitingFor(run.status, state.pending, callRunsOf(state)) : {}),
    ...(children && children.length > 0
      ? { children: children.map((child) => ({ runId: child.id, agentId: child.agentId, role: child.role, status: child.status, usage: child.usage })) }
      : {}),
    ...(reasoning ? { reasoning } : {}),
  };
}

function waitingFor(status: string, pending: PendingCalls, callRuns?: CallRuns): Pick<PausedReply, 'requiredAction' | 'approvals'> {
  const runOf = (kind: keyof CallRuns, i: number) => {
    const runId = callRuns?.[kind][i];
    return runId !== undefined ? { runId } : {};
  };
  if (status === 'requires_approval') {
    return {
      approvals: pending.approvals.map((call, i) => ({
        toolCallId: call.id,
        name: call.name,
        arguments: toolArgumentsOf(call.arguments),
        ...runOf('approvals', i),
      })),
    };
  }
  if (status === 'requires_action') {
    return {
      requiredAction: {
        type: 'submit_tool_outputs',
        toolCalls: pending.clientCalls.map((call, i) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(toolArgumentsOf(call.arguments)) },
          ...runOf('clientCalls', i),
        })),
      },
    };
  }
  return {};
}
