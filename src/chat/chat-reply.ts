import type { StopReason } from '../llm/agent-loop.js';
import type { RunToolCall, RunUsage } from '../runs/run-types.js';
import type { PausedReply } from '../runs/run-view.js';
import type { Citation } from './citations.js';
import type { CompactionReport } from './conversation-turn.js';
import type { Source } from '../retrieval/source.js';

export type { ApprovalRequest, PausedReply, RequiredToolCall, RunView } from '../runs/run-view.js';

export type ChatToolCall = RunToolCall;

export type ChatUsage = RunUsage;

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
  /** The model's reasoning this turn, when the request asked for it (`includeReasoning`) and the model gave some. */
  reasoning?: string;
}

export type TurnReply = ChatReply | PausedReply;

export type ChatEvent =
  | { type: 'retrieval'; runId: string; conversationId: string; sources: Source[] }
  | { type: 'delta'; text: string }
  /** A steering message joined the turn before its next model call. */
  | { type: 'steer'; message: string }
  /** A piece of the model's reasoning: never part of the answer. */
  | { type: 'thinking'; text: string }
  /** Before and after each request to the model. */
  | { type: 'turn_start'; iteration: number }
  | { type: 'turn_end'; iteration: number; finishReason: string | null; usage: ChatUsage }
  /** A failed request to the model about to be retried after `delayMs`. */
  | { type: 'retry'; attempt: number; delayMs: number; status: number | null; reason: string }
  | { type: 'tool_start'; id: string; name: string; arguments: unknown }
  | { type: 'tool_end'; id: string; name: string; isError: boolean; result: string; sources: Source[] }
  | ({ type: 'compaction' } & CompactionReport)
  | { type: 'done'; reply: ChatReply }
  | { type: 'paused'; reply: PausedReply }
  /** A `delegate` call started a child run; it ended (`status` as its run's). */
  | { type: 'delegate_start'; role: string; agentId: string; runId: string }
  | { type: 'delegate_end'; runId: string; status: string }
  /** A child run's own event, forwarded to a streaming parent. */
  | { type: 'child'; runId: string; event: ChatEvent }
  | { type: 'error'; error: unknown };
