import type { PendingCalls } from '../llm/agent-loop.js';
import { toolArgumentsOf } from '../llm/tool-arguments.js';
import type { Run, RunState, RunToolCall, RunUsage } from './run-types.js';

/** A call the client is asked to run, in OpenAI's shape. */
export interface RequiredToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ApprovalRequest {
  toolCallId: string;
  name: string;
  /** As the tool would get them: parsed (repaired when almost-JSON), else the raw text. */
  arguments: unknown;
}

/** A turn waiting for the client: its tools' outputs, or a person's decisions. */
export interface PausedReply {
  runId: string;
  status: 'requires_action' | 'requires_approval';
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
};

export function pausedReply(input: {
  runId: string;
  conversationId: string;
  status: PausedReply['status'];
  pending: PendingCalls;
  toolCalls: RunToolCall[];
  usage: RunUsage;
  costUsd: number | null;
  expiresAt: Date;
}): PausedReply {
  return {
    runId: input.runId,
    status: input.status,
    conversationId: input.conversationId,
    ...waitingFor(input.status, input.pending),
    toolCalls: input.toolCalls,
    usage: input.usage,
    costUsd: input.costUsd,
    expiresAt: input.expiresAt.toISOString(),
  };
}

export function runView(run: Run, state: RunState | null): RunView {
  return {
    ...run,
    expiresAt: run.expiresAt?.toISOString() ?? null,
    createdAt: run.createdAt.toISOString(),
    updatedAt: run.updatedAt.toISOString(),
    ...(state ? waitingFor(run.status, state.pending) : {}),
  };
}

function waitingFor(status: string, pending: PendingCalls): Pick<PausedReply, 'requiredAction' | 'approvals'> {
  if (status === 'requires_approval') {
    return { approvals: pending.approvals.map((call) => ({ toolCallId: call.id, name: call.name, arguments: toolArgumentsOf(call.arguments) })) };
  }
  if (status === 'requires_action') {
    return {
      requiredAction: {
        type: 'submit_tool_outputs',
        toolCalls: pending.clientCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(toolArgumentsOf(call.arguments)) },
        })),
      },
    };
  }
  return {};
}
