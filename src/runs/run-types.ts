import type { AgentTurnState, PendingCalls } from '../llm/agent-loop.js';
import type { AgentSettings } from '../agents/agent-config.js';
import type { ReasoningEffort } from '../llm/reasoning.js';
import type { Sampling } from '../llm/sampling.js';
import type { ChatMessage, ImagePart } from '../llm/messages.js';
import type { Source } from '../retrieval/source.js';

export const RUN_STATUSES = ['running', 'requires_action', 'requires_approval', 'paused', 'completed', 'failed', 'cancelled', 'expired'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Statuses a run waits in for the client; it resumes from its stored state. `paused`: stopped on request (`POST /v1/runs/:id/pause`). */
export const PAUSED_STATUSES: readonly RunStatus[] = ['requires_action', 'requires_approval', 'paused'];

/** Statuses a run has ended in: nothing moves it on. */
export const ENDED_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'expired'];

/** A message queued to start the conversation's next turn, as its own run, once this run's turn completes. */
export interface FollowUp {
  runId: string;
  message: string;
}

export interface RunUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Prompt tokens served from the provider's prefix cache; absent when it reported none. */
  cachedTokens?: number;
  /** Completion tokens spent reasoning; absent when it reported none. */
  reasoningTokens?: number;
}

export interface Run {
  id: string;
  status: RunStatus;
  agentId: string;
  /** The user the turn is with; null when none was named. */
  userId: string | null;
  conversationId: string;
  /** The agent version the run started with; null when the agent had no record. */
  agentVersion: number | null;
  usage: RunUsage;
  /**
   * Why the turn ended (`completed`, `max_iterations`, `budget`, `max_tokens`); null until it has. A
   * `running` run with one has its end claimed: its turn is being stored (`RunStore.claimEnd`).
   */
  stopReason: string | null;
  /** The error body of a failed run. */
  error: Record<string, unknown> | null;
  /** When a paused run expires if left unanswered. */
  expiresAt: Date | null;
  /** Messages queued to run as the next turns once this one completes, in order. */
  followUps: FollowUp[];
  /** The run that started this one (a delegation's lead, a workflow step's workflow run); null at the top. */
  parentRunId: string | null;
  /** Under a parent: the role (a delegation) or the node (a workflow step) it runs as. */
  role: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A tool the client declared (OpenAI's function tool shape). */
export interface ClientToolDeclaration {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
  /** Kept behind `tool_search` whatever the number of tools: the model finds it by searching. */
  deferred?: boolean;
}

/** A tool call as the chat reports it. */
export interface RunToolCall {
  id: string;
  name: string;
  arguments: unknown;
  result: string;
  isError: boolean;
}

/** What a paused run resumes from; plain JSON. */
export interface RunState {
  request: {
    message: string;
    /** The turn's own instructions in place of the agent's (an OpenAI client's system message). */
    instructions?: string;
    topK?: number;
    candidateK?: number;
    tagsAny?: string[];
    tagsAll?: string[];
    tagsNone?: string[];
    /** The message's images as references (an attachment's id, an https URL): loaded again when the run resumes. */
    images?: ImagePart[];
    /** `/v1/chat`'s `instructions`: added after the agent's, for this turn only. */
    turnInstructions?: string;
    /** The request's sampling, over the agent's field by field. */
    sampling?: Sampling;
    /** The request's reasoning effort, over the agent's. */
    reasoning?: { effort: ReasoningEffort };
    /** The reply carries the model's reasoning. */
    includeReasoning?: boolean;
  };
  /** The agent's settings as the run started (null: the deployment's defaults). */
  agent: AgentSettings | null;
  /** The question as the model saw it, with the recalled sources. */
  userContent: string;
  /** Every numbered source so far, recalled or found by tools. */
  sources: Source[];
  toolCalls: RunToolCall[];
  clientTools: ClientToolDeclaration[];
  /** The number the turn will most likely be stored under (tools' memory history names it). */
  nextTurn: number;
  /** The history the client sent (an OpenAI client's thread), which a resumed turn is sent again in place of the stored one. */
  sentHistory?: ChatMessage[];
  /** Images client tools returned earlier in the turn, as references by tool call id. */
  toolImages?: Record<string, ImagePart[]>;
  turn: AgentTurnState;
  pending: PendingCalls;
  /** The last SSE event id sent, so a resumed stream goes on numbering. */
  eventSeq: number;
  /** Steering messages that arrived after the last model call before the pause: they join the turn when it resumes. */
  steers?: string[];
  /** A delegated run's place in its tree, kept so that its own delegations after a resume see the same stack. */
  lineage?: RunLineage;
  /** Delegations this run waits on: their pending calls are listed (and answered) as this run's. */
  waitingChildren?: WaitingChild[];
  /** What the delegations that ended before the pause spent: the run's usage and cost include it. */
  delegatedUsage?: { usage: RunUsage; costUsd: number | null };
}

/** A delegated run's place under its lead: the agents above it (the cycle and depth checks read them). */
export interface RunLineage {
  parentRunId: string;
  role: string;
  /** The agents of the runs above it, the top one first, and its own last. */
  stack: string[];
}

/** A paused delegation its parent waits on. */
export interface WaitingChild {
  /** The parent's `delegate` call the child answers. */
  toolCallId: string;
  runId: string;
  role: string;
  agentId: string;
  /** The child's calls its parent waits on (of the kind the child waits for), listed as the parent's. */
  pending: PendingCalls;
  /** The child's pending call ids, each with the run that asked for it (the child's, or one below it). */
  calls: Record<string, string>;
}

/** No run by this id in the tenant. */
export class RunNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`No run ${JSON.stringify(id)}`);
    this.name = 'RunNotFoundError';
  }
}

/** The run cannot take this request in its status (answered already, expired, finished, cancelled). */
export class RunConflictError extends Error {
  constructor(
    readonly code:
      | 'run_not_waiting'
      | 'run_expired'
      | 'tool_call_not_pending'
      | 'answer_through_parent'
      | 'run_waiting'
      | 'run_finished'
      | 'run_not_running'
      | 'run_not_live'
      | 'follow_ups_full',
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RunConflictError';
  }
}

/** The answers leave out calls the run waits on, or repeat one. */
export class RunInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'RunInputError';
  }
}

/** The run was cancelled (`POST /v1/runs/:id/cancel`) while it ran. */
export class RunCancelledError extends Error {
  constructor(readonly id: string) {
    super(`Run ${id} was cancelled`);
    this.name = 'RunCancelledError';
  }
}

export interface NewRun {
  id: string;
  agentId: string;
  userId: string | null;
  conversationId: string;
  agentVersion: number | null;
  status: RunStatus;
  usage?: RunUsage;
  stopReason?: string | null;
  /** See `RunUpdate.threadKey`. */
  threadKey?: string;
  /** Follow-ups the run inherits (the rest of its predecessor's queue): it starts the next of them when it completes. */
  followUps?: FollowUp[];
  parentRunId?: string;
  role?: string;
}

export interface RunUpdate {
  status: RunStatus;
  usage?: RunUsage;
  stopReason?: string | null;
  /** Kept while paused; cleared (null) once the run ends. */
  state?: RunState | null;
  error?: Record<string, unknown> | null;
  expiresAt?: Date | null;
  /**
   * The key of the messages the reply leaves its client holding (`conversationOfThread`), written
   * with the end or pause that sends the reply: a client's next turn can follow it at once.
   */
  threadKey?: string;
  /** The model's reasoning over the turn, written with its end (kept out of the answer and the stored turn). */
  reasoning?: string | null;
}

/** Whether a run's end is claimed: its last model call answered, its turn being stored (`RunStore.claimEnd`). */
export const isEndClaimed = (run: Pick<Run, 'status' | 'stopReason'>): boolean => run.status === 'running' && run.stopReason !== null;

/** The runs of one tenant (see `TenantScoped`). */
export interface RunStore {
  create(run: NewRun): Promise<Run>;
  /** A waiting run past its expiry reads as `expired` (the sweeper writes it so later). */
  get(id: string): Promise<Run | null>;
  /** The run with its stored state, for resuming, and the reasoning its end kept (absent when none was). */
  load(id: string): Promise<{ run: Run; state: RunState | null; reasoning?: string } | null>;
  /**
   * Moves a run on; with `from`, only when it is in one of those statuses (a compare-and-set, so
   * two resumes of one pause cannot both win), and never a waiting run past its expiry nor a run
   * whose end is claimed (`endClaimed` ends that one). False when it was not.
   */
  update(id: string, update: RunUpdate, from?: readonly RunStatus[]): Promise<boolean>;
  /**
   * Claims the end of a running run whose turn ended with `stopReason`, before the turn is stored:
   * from then on nothing but `endClaimed` moves it on (a cancel is refused, as it is once the run has
   * ended), while it still reads `running`, so that a reader who sees it end finds its turn stored.
   * False when it is not running (cancelled meanwhile) or its end is claimed already.
   */
  claimEnd(id: string, stopReason: string): Promise<boolean>;
  /**
   * Ends a run whose end `claimEnd` claimed (completed once its turn is stored, or failed): the run
   * as its end left it, with every follow-up the store accepted (later ones are refused as ended);
   * null when it had no claimed end.
   */
  endClaimed(id: string, update: RunUpdate): Promise<Run | null>;
  /** The status alone: what a running turn checks for a cancel from another process. */
  statusOf(id: string): Promise<RunStatus | null>;
  /**
   * Queues a follow-up on a run that has not ended (running or waiting, not expired): appended in
   * one statement, so that it is either in the list the run's completion reads or refused. False when
   * the run has ended (or is not the tenant's).
   */
  addFollowUp(id: string, followUp: FollowUp): Promise<boolean>;
  /** The runs started under this one (delegations, workflow steps), oldest first. */
  children(parentRunId: string): Promise<Run[]>;
  /** The run of a conversation that waits for the client, if one does (and has not expired). */
  waitingIn(conversationId: string): Promise<string | null>;
  /** The conversation of the latest run marked with `threadKey` for this agent and user; null when none is. */
  conversationOfThread(threadKey: string, agentId: string, userId: string | null): Promise<string | null>;
}
