import { parseToolArguments } from '../llm/tool-arguments.js';
import type { StopReason } from '../llm/agent-loop.js';
import type { Run, RunToolCall } from '../runs/run-types.js';
import type { Citation } from './citations.js';
import type { CompactionReport } from './conversation-turn.js';
import type { Source } from './sources.js';

export type ChatToolCall = RunToolCall;

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** A turn that ran to its end. */
export interface ChatReply {
  runId: string;
  status: 'completed';
  conversationId: string;
  answer: string;
  citations: Citation[];
  toolCalls: ChatToolCall[];
  usage: ChatUsage;
  /** Null when no price is known for the model (or no model ran). */
  costUsd: number | null;
  stopReason: StopReason;
  mode: 'llm' | 'extractive';
  /** Set when the reply needs a word of explanation (e.g. why it is extractive). */
  note?: string;
}

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
  toolCalls: ChatToolCall[];
  usage: ChatUsage;
  costUsd: number | null;
  /** Past this time the run expires, unless answered. */
  expiresAt: string;
}

export type TurnReply = ChatReply | PausedReply;

/** A run as `GET /v1/runs/:id` shows it: what it is waiting for, when it waits. */
export type RunView = Omit<Run, 'expiresAt' | 'createdAt' | 'updatedAt'> & {
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  requiredAction?: PausedReply['requiredAction'];
  approvals?: ApprovalRequest[];
};

export type ChatEvent =
  | { type: 'retrieval'; runId: string; conversationId: string; sources: Source[] }
  | { type: 'delta'; text: string }
  | { type: 'tool_start'; id: string; name: string; arguments: unknown }
  | { type: 'tool_end'; id: string; name: string; isError: boolean; result: string; sources: Source[] }
  | ({ type: 'compaction' } & CompactionReport)
  | { type: 'done'; reply: ChatReply }
  | { type: 'paused'; reply: PausedReply }
  | { type: 'error'; error: unknown };

/**
 * A tool call's arguments as the client is shown them: as they were checked and run (repaired when
 * the model sent almost-JSON), else the raw text.
 */
export function toolArgumentsOf(raw: string): unknown {
  const parsed = parseToolArguments(raw);
  return parsed.ok ? parsed.value : raw;
}
