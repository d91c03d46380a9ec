import type { LlmProvider, LlmResult } from './llm-provider.js';
import type { ChatMessage, ToolCall, ToolSpec, Usage } from './messages.js';
import type { PriceTable } from './pricing.js';
import type { CallOptions } from './sampling.js';
import type { Tool } from './tool.js';

export interface ToolResult {
  content: string;
  isError: boolean;
  durationMs: number;
}

export interface AgentHooks {
  /** May return a transformed copy; it shapes this request only and is not written to history. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (void) leaves the messages as they are.
  beforeLlm?(messages: ChatMessage[]): ChatMessage[] | void | Promise<ChatMessage[] | void>;
  afterLlm?(result: LlmResult): void | Promise<void>;
  beforeTool?(call: ToolCall): void | Promise<void>;
  afterTool?(call: ToolCall, result: ToolResult): void | Promise<void>;
}

export type AgentEvent =
  | { type: 'delta'; text: string; iteration: number }
  | { type: 'tool_start'; call: ToolCall; iteration: number }
  | { type: 'tool_end'; call: ToolCall; result: ToolResult; iteration: number }
  /** A piece of the model's reasoning: never part of the answer. */
  | { type: 'thinking'; text: string; iteration: number }
  /** Before each request to the model (a continuation or an empty reply's retry is a request of its own). */
  | { type: 'turn_start'; iteration: number }
  /** After each request to the model, with that request's usage. */
  | { type: 'turn_end'; iteration: number; finishReason: string | null; usage: Usage }
  /** A failed request about to be retried after `delayMs`; `status` is the HTTP status when there was one. */
  | { type: 'retry'; iteration: number; attempt: number; delayMs: number; status: number | null; reason: string }
  /** A steering message joined the turn, before this iteration's model call. */
  | { type: 'steer'; message: string; iteration: number };

export interface AgentBudget {
  maxTokens?: number;
  maxCostUsd?: number;
  /** Spend made on the turn's behalf outside its own model calls (runs it started), counted against the budget too. */
  extraSpend?: () => { totalTokens: number; costUsd: number | null };
}

/** A tool the client runs: advertised to the model, and a call to it pauses the turn. */
export interface ClientTool extends ToolSpec {
  /** Checks the model's arguments; an error message sends the call back to the model instead of pausing. */
  validate?(args: unknown): string | undefined;
  /** Kept behind `tool_search` whatever the number of tools. */
  deferred?: boolean;
}

/** A person's answer to a call waiting for approval. */
export interface ApprovalDecision {
  approve: boolean;
  reason?: string;
}

/** Where a paused turn stands: what it resumes from. Plain JSON, so it can be stored. */
export interface AgentTurnState {
  /** Messages produced so far this turn; the last assistant message has calls without results. */
  newMessages: ChatMessage[];
  usage: Usage & { totalTokens: number };
  /** Model calls made so far. */
  iterations: number;
  /** Tools the tool search made visible; they stay visible for the rest of the turn. */
  promoted: string[];
  /** The model's reasoning so far this turn, each call's apart by a blank line; kept out of `newMessages`. */
  reasoning?: string;
  /** Errors in a row per tool, when a circuit breaker is set (`maxConsecutiveToolErrors`). */
  toolErrors?: Record<string, number>;
  /** Tools withdrawn for the rest of the turn by the circuit breaker. */
  withdrawn?: string[];
}

export interface AgentTurnOptions {
  provider: LlmProvider;
  systemPrompt?: string;
  /** Conversation so far (no system message); not mutated. */
  messages: ChatMessage[];
  // biome-ignore lint/suspicious/noExplicitAny: tools are heterogeneous in their argument types; `any` keeps Tool<S> assignable here.
  tools?: Tool<any>[];
  /** Run by the client: a call to one pauses the turn until its output is given back (`resume`). */
  clientTools?: ClientTool[];
  /** Calls to these tools wait for a person's decision: the turn pauses before running them. */
  needsApproval?: (call: ToolCall) => boolean;
  /** With more tools than this, only `tool_search` and the tools it found are advertised. */
  toolSearchThreshold?: number;
  /** Continues a paused turn, with the client's tool outputs and the approval decisions, by call id. */
  resume?: {
    state: AgentTurnState;
    outputs?: ReadonlyMap<string, string>;
    decisions?: ReadonlyMap<string, ApprovalDecision>;
  };
  maxIterations?: number;
  toolConcurrency?: number;
  toolTimeoutMs?: number;
  /** Built-in tools kept behind `tool_search` whatever the number of tools. */
  deferredTools?: readonly string[];
  /** Characters of a tool result sent to the model at most; the rest is replaced by a note. */
  maxToolResultChars?: number;
  /** A tool erring this many times in a row is withdrawn for the rest of the turn (no breaker when unset). */
  maxConsecutiveToolErrors?: number;
  /** Reads a reply that is nothing but tool calls written as text as those calls (default true). */
  textToolCalls?: boolean;
  /** A single hook set or several, run in array order. */
  hooks?: AgentHooks | AgentHooks[];
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /** Defaults to streaming when `onEvent` is given, since only then is anyone watching deltas. */
  stream?: boolean;
  prices?: PriceTable;
  budget?: AgentBudget;
  /** How many times an empty reply is answered with a nudge before giving up. */
  maxEmptyRetries?: number;
  /** Sampling and reasoning effort sent with every model call of the turn. */
  callOptions?: CallOptions;
  /** How many times a reply cut by the output limit is continued before the turn ends with `max_tokens` (default 2). */
  maxContinuations?: number;
  /** Read at each step boundary (before each model call): messages joining the turn, and a request to pause. */
  steering?: AgentSteering;
}

/** What a client tells a running turn between its steps (`RunSteering` is the runs' implementation). */
export interface AgentSteering {
  /** Messages to send the model, as user messages, before its next call; each handed out once. */
  drain(): string[];
  /** The turn stops at this boundary, paused with nothing pending, and resumes from there. */
  pauseRequested(): boolean;
  /**
   * Asked when the model has answered: closes the queue (later messages are refused) and returns
   * true, unless messages wait, which the turn goes on to answer (false).
   */
  finish(): boolean;
  /**
   * The turn makes no more model calls (its last is about to be made, or it ends without pausing):
   * later messages and pauses are refused rather than accepted and lost. Returns what was still queued.
   */
  close(): readonly string[];
}

export type StopReason = 'completed' | 'max_iterations' | 'budget' | 'max_tokens';

/** Calls the turn waits on: approvals first, then the client's tools. */
export interface PendingCalls {
  approvals: ToolCall[];
  clientCalls: ToolCall[];
}

export interface AgentTurnResult {
  /** `paused` when calls wait for the client or a person (`pending`); resume with `state`. */
  stopReason: StopReason | 'paused';
  /** Messages produced during this turn, to append to the conversation. */
  newMessages: ChatMessage[];
  /** Text of the last assistant message ('' when the turn did not end with an answer). */
  text: string;
  usage: Usage & { totalTokens: number };
  /** Undefined when the model has no entry in the price table. */
  costUsd: number | undefined;
  iterations: number;
  pending?: PendingCalls;
  /** What a paused turn resumes from. */
  state: AgentTurnState;
  /** The model's reasoning this turn (as `state.reasoning`); undefined when it gave none. */
  reasoning?: string;
}
