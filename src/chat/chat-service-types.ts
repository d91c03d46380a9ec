import type { Agent, AgentSettings } from '../agents/agent-config.js';
import type { AgentStore } from '../agents/agent-store.js';
import type { BlockStore } from '../blocks/block-types.js';
import type { CompactionSettings } from '../compaction/compaction-config.js';
import type { AfterTurnHooks } from '../conversations/after-turn-hooks.js';
import type { AttachmentStore } from '../conversations/attachment-store.js';
import type { ConversationStore } from '../conversations/conversation-types.js';
import type { TurnSearch } from '../conversations/turn-search.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { ChatMessage, ImagePart } from '../llm/messages.js';
import type { PriceTable } from '../llm/pricing.js';
import type { ReasoningEffort } from '../llm/reasoning.js';
import type { Sampling } from '../llm/sampling.js';
import type { MemoryStore } from '../memory/memory-types.js';
import type { KnowledgeRetriever } from '../retrieval/knowledge.js';
import type { LiveRuns } from '../runs/live-runs.js';
import type { DescribeError, RunListener, RunService } from '../runs/run-service.js';
import type { ClientToolDeclaration, FollowUp, RunLineage, RunStore } from '../runs/run-types.js';
import type { TurnDelegation } from './turn-delegation.js';
import type { ChatEvent, TurnReply } from './chat-reply.js';
import type { TagFilters } from './context-block.js';
import type { ConversationView } from './conversation-view.js';

/** Who listens to a turn's events: `seq` is the event's SSE id; `stream` sends the model's reply as `delta` events. */
export type ChatListener = RunListener<ChatEvent, TurnReply>;

export interface ChatRequest extends TagFilters, ChatListener {
  /** The message's text: what recall, indexing and extraction read. */
  message: string;
  /** Images sent with the message (https or checked data URLs): the model sees them, the conversation keeps them. */
  images?: ImagePart[];
  agentId: string;
  /**
   * The user the turn is with: memories are recalled from theirs and the agent's shared ones, the
   * tools write theirs, past turns come from their conversations. Fixed on a conversation by its
   * first turn. Absent: no user (shared memories only).
   */
  userId?: string;
  conversationId?: string;
  topK?: number;
  /** Document candidates retrieved before reranking cuts them to `topK`. */
  candidateK?: number;
  /** Tools the client runs; a call to one pauses the turn until its output is submitted. */
  clientTools?: ClientToolDeclaration[];
  /**
   * The history as the client keeps it (an OpenAI client's earlier messages): the model is sent
   * these, compacted to its window, instead of the stored conversation, which gets this turn only.
   */
  history?: ChatMessage[];
  /** This turn's instructions in place of the agent's (an OpenAI client's system message). */
  instructions?: string;
  /** This turn's instructions added after the agent's (`/v1/chat`'s `instructions`). */
  turnInstructions?: string;
  /** Sampling for this turn, over the agent's field by field. */
  sampling?: Sampling;
  /** Reasoning effort for this turn, over the agent's. */
  reasoning?: { effort: ReasoningEffort };
  /** The reply carries the model's reasoning. */
  includeReasoning?: boolean;
  /** The agent's record as the caller already read it (null: none); read here when undefined. */
  agent?: Agent | null;
  /** The run's id, chosen beforehand (a follow-up's, told to the client that queued it); a new one when undefined. */
  runId?: string;
  /** Follow-ups this turn's run starts when it completes (the rest of its predecessor's queue). */
  followUps?: FollowUp[];
  /** A delegation's turn: the run it is a child of, its role, and the agents above it. */
  lineage?: RunLineage;
}

/** A turn a client ran with its own model, given to be stored as a chat turn is. */
export interface RecordedTurn {
  conversationId: string;
  agentId: string;
  userId?: string;
  /** The user's message. */
  user: string;
  /** The model's reply as the client received it. */
  assistant: string;
  signal?: AbortSignal;
}

/** How the chat runs an agent's settings: its model, and compaction for that model. */
export interface AgentRuntime {
  /** The model for an agent's settings (null: the deployment's); undefined: none, the reply is extractive. */
  llmFor(settings: AgentSettings | null): LlmProvider | undefined;
  /** Compaction settings for a model (the deployment's COMPACTION_MODELS entry, or its defaults). */
  compactionFor(model: string | undefined): CompactionSettings;
}

export interface ChatServiceOptions {
  /** The tenant the stores below belong to; told to the after-turn hooks. */
  tenantId: string;
  memories: MemoryStore;
  knowledge?: KnowledgeRetriever;
  /** The model and compaction each agent runs with; without a model, replies are extractive. */
  agentRuntime: AgentRuntime;
  /** The app's embedder: an extractive reply weighs sentences by their cosine to the question too. */
  embedder?: Pick<Embedder, 'embed'>;
  prices?: PriceTable;
  maxIterations?: number;
  /** The conversations' images; without it a message's images reach the model but are not kept. */
  attachments?: AttachmentStore;
  /** Working memory: each turn's prompt carries the blocks of its agent and user, and the model keeps them with tools. */
  blocks?: BlockStore;
  /** The last this many turns' images are sent again with their messages (IMAGE_HISTORY_TURNS, default 2). */
  imageHistoryTurns?: number;
  /** Stores conversations; without it each turn stands alone. */
  conversations?: ConversationStore;
  /** Past turns of the agent's other conversations, recalled beside memories and documents when conversations are stored. */
  turns?: TurnSearch;
  /** Run on each stored turn after the reply (the checkpoint, ...); none when undefined. */
  afterTurn?: AfterTurnHooks;
  /** How long a summarising request may take before the rule-based fallback is used. */
  summaryTimeoutMs?: number;
  /** How long a turn waits for the previous turn's checkpoint and summary work still running. */
  compactionSettleTimeoutMs?: number;
  /** Told when a summary fell back to the rules. */
  onSummaryFallback?: (error: unknown) => void;
  /** Agents' settings by `agentId`; without a store (or a record) a turn runs on the deployment's defaults. */
  agents?: AgentStore;
  /** Where runs are recorded, and paused ones kept until resumed. */
  runs: RunStore;
  /** Runs in progress in this process (cancel, reconnect); one per process, shared by tenants. */
  liveRuns?: LiveRuns<ChatEvent>;
  /** A paused run left unanswered this long expires. */
  runTtlSeconds?: number;
  /** With more tools than this, the model sees `tool_search` and what it found instead of all of them. */
  toolSearchThreshold?: number;
  /** Whether turns are read for facts when the agent does not say (MEMORY_EXTRACTION). */
  memoryExtraction?: boolean;
  /**
   * What a failed run records of its error, as the client would be told it (`GET /v1/runs/:id`):
   * the API's error body, so that internals stay out of it. Default: `turn_failed`, no details.
   */
  describeError?: DescribeError;
  /** The `delegate` tool and the child runs it starts (src/delegation/, injected); no delegation when undefined. */
  delegation?: TurnDelegation;
}

/** A turn's runs: the lifecycle of a paused, resumed or cancelled one is the run service's. */
export type ChatRuns = Pick<RunService<ChatEvent, TurnReply>, 'beginResume' | 'resume' | 'getRun' | 'cancelRun' | 'liveRun' | 'sendMessage' | 'requestPause'>;

export interface ChatService extends ChatRuns {
  /** One turn: the answer, or a pause for the client's tools or a person's approval. */
  chat(request: ChatRequest): Promise<TurnReply>;
  /**
   * Throws ConversationNotFoundError when `conversationId` is another agent's (or another
   * tenant's, or another user's): checked before a reply starts streaming, so the refusal is a
   * plain error reply.
   */
  assertCanContinue(conversationId: string | undefined, agentId: string, userId?: string): Promise<void>;
  /**
   * Stores a turn the client ran elsewhere (its own model and prompt) in the conversation, creating
   * it when new: recalled as a past turn and read for facts afterwards, as a chat turn is. Resolves
   * to the number the turn was stored under; throws ConversationNotFoundError as a chat turn would.
   */
  recordTurn(turn: RecordedTurn): Promise<{ conversationId: string; turn: number }>;
  /** The stored conversation with what it costs in a prompt; null when the agent has none by that id. */
  describeConversation(id: string, agentId: string): Promise<ConversationView | null>;
}
