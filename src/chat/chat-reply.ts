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
}

export type TurnReply = ChatReply | PausedReply;

export type ChatEvent =
  | { type: 'retrieval'; runId: string; conversationId: string; sources: Source[] }
  | { type: 'delta'; text: string }
  | { type: 'tool_start'; id: string; name: string; arguments: unknown }
  | { type: 'tool_end'; id: string; name: string; isError: boolean; result: string; sources: Source[] }
  | ({ type: 'compaction' } & CompactionReport)
  | { type: 'done'; reply: ChatReply }
  | { type: 'paused'; reply: PausedReply }
  | { type: 'error'; error: unknown };
