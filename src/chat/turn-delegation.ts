import type { AgentSettings } from '../agents/agent-config.js';
import type { PendingCalls } from '../llm/agent-loop.js';
import type { Tool } from '../llm/tool.js';
import type { RunLineage, RunToolCall, RunUsage, WaitingChild } from '../runs/run-types.js';
import type { ChatEvent } from './chat-reply.js';

/**
 * What a turn tells the delegation feature (src/delegation/, injected through the chat's options so
 * that the chat imports none of it): the run a `delegate` call starts children under.
 */
export interface DelegatingTurn {
  runId: string;
  conversationId: string;
  agentId: string;
  userId: string | null;
  settings: AgentSettings | null;
  lineage: RunLineage | undefined;
  /** The parent's live signal: a child is cancelled with it. */
  signal: AbortSignal;
  emit(event: ChatEvent): void;
  /** The parent streams: its children's events are forwarded (`{type: "child"}`). */
  stream: boolean;
  /** What the turn has spent so far (its own model calls), for the budget a child is bounded by. */
  spent(): RunUsage;
  /** Stops the turn at its next step boundary: a child waits for the client. */
  requestPause(): void;
  /** Delegations left waiting by an earlier stretch of the turn, and what ended ones spent. */
  waiting: readonly WaitingChild[];
  delegatedUsage: { usage: RunUsage; costUsd: number | null } | undefined;
}

/** The answers a paused parent was given, some of them for its children's calls. */
export interface DelegationAnswers {
  outputs?: ReadonlyMap<string, string>;
  decisions?: ReadonlyMap<string, { approve: boolean; reason?: string }>;
}

/** One turn's delegations. */
export interface TurnDelegates {
  /** `delegate`, when the agent has a cast. */
  // biome-ignore lint/suspicious/noExplicitAny: tools of different argument schemas in one list.
  tools: Tool<any>[];
  /**
   * Before a paused turn goes on: resumes the children the answers are for, and writes their
   * results over the waiting `delegate` results of `messages` and `toolCalls`; a child still
   * waiting asks the turn to pause again.
   */
  resumeWaiting(
    answers: DelegationAnswers,
    messages: Array<{ role: string; toolCallId?: string; content?: unknown; isError?: boolean }>,
    toolCalls: RunToolCall[],
  ): Promise<void>;
  /** Children waiting now: stored with the parent's pause. */
  waiting(): WaitingChild[];
  /** The parent's pending calls with its waiting children's added. */
  pendingWith(own: PendingCalls | undefined): PendingCalls;
  /** What the delegations spent: `all` (ended and waiting ones), and `ended` (kept with a pause: a waiting one reports its own when it ends). */
  usage(): { all: { usage: RunUsage; costUsd: number | null }; ended: { usage: RunUsage; costUsd: number | null } };
  /** The turn ended without pausing: children still waiting are cancelled, nobody can answer them now. */
  abandonWaiting(): Promise<void>;
}

export interface TurnDelegation {
  /** Undefined when the agent has no cast and nothing waits. */
  forTurn(turn: DelegatingTurn): TurnDelegates | undefined;
}
