import type { Agent, AgentSettings } from '../agents/agent-config.js';
import type { PendingCalls } from '../llm/agent-loop.js';
import type { PausedReply } from '../runs/run-view.js';
import type { RunLineage, RunToolCall, RunUsage, WaitingChild } from '../runs/run-types.js';

/**
 * The chat as delegation sees it: the shapes it needs, not the chat's own types (nothing below the
 * edges imports src/chat/). The composition root hands the chat service in; `E` is its event type.
 */
export interface ChildTurns<E> {
  chat(request: ChildTurnRequest<E>): Promise<ChildReply>;
  resume(request: ChildResumeRequest<E>): Promise<ChildReply>;
  cancelRun(runId: string): Promise<unknown>;
}

export interface ChildListener<E> {
  onEvent?: (event: E, seq: number) => void;
  signal?: AbortSignal;
  stream?: boolean;
}

export interface ChildTurnRequest<E> extends ChildListener<E> {
  message: string;
  agentId: string;
  userId?: string;
  conversationId: string;
  runId: string;
  /** The role's agent as read (null: none stored, the deployment's defaults), its budget bounded by the parent's. */
  agent: Agent | null;
  lineage: RunLineage;
}

export interface ChildResumeRequest<E> extends ChildListener<E> {
  runId: string;
  toolOutputs?: Array<{ toolCallId: string; output: string }>;
  decisions?: Array<{ toolCallId: string; approve: boolean; reason?: string }>;
}

/** A child turn that ran to its end: what its parent's tool result is made of. */
export interface CompletedChild {
  runId: string;
  status: 'completed';
  answer: string;
  usage: RunUsage;
  costUsd: number | null;
}

export type ChildReply = CompletedChild | PausedReply;

/** The events a delegation adds to its parent's stream. */
export type DelegationEvent<E> =
  | { type: 'delegate_start'; role: string; agentId: string; runId: string }
  | { type: 'delegate_end'; runId: string; status: string }
  | { type: 'child'; runId: string; event: E };

/** The parent turn, as the chat describes it (see the chat's `DelegatingTurn`). */
export interface ParentTurn<E> {
  runId: string;
  conversationId: string;
  agentId: string;
  userId: string | null;
  settings: AgentSettings | null;
  lineage: RunLineage | undefined;
  signal: AbortSignal;
  emit(event: DelegationEvent<E>): void;
  stream: boolean;
  spent(): RunUsage;
  requestPause(): void;
  waiting: readonly WaitingChild[];
  delegatedUsage: { usage: RunUsage; costUsd: number | null } | undefined;
}

export interface Spend {
  usage: RunUsage;
  costUsd: number | null;
}

/** A tool message of the parent's turn, as a waiting delegation's result is written over. */
export interface ParentMessage {
  role: string;
  toolCallId?: string;
  content?: unknown;
  isError?: boolean;
}

export interface ParentAnswers {
  outputs?: ReadonlyMap<string, string>;
  decisions?: ReadonlyMap<string, { approve: boolean; reason?: string }>;
}

export type { PendingCalls, RunToolCall, WaitingChild };
