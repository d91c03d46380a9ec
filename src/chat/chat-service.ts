import { randomUUID } from 'node:crypto';
import { type Agent, type AgentSettings, settingsOf } from '../agents/agent-config.js';
import type { AgentStore } from '../agents/agent-store.js';
import type { CompactionSettings } from '../compaction/compaction-config.js';
import { createLlmSummarizer } from '../compaction/summarizer.js';
import type { AfterTurnHooks } from '../conversations/after-turn-hooks.js';
import { ConversationNotFoundError, type ConversationStore } from '../conversations/conversation-types.js';
import type { TurnSearch } from '../conversations/turn-search.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { ChatMessage } from '../llm/messages.js';
import type { PriceTable } from '../llm/pricing.js';
import type { MemoryStore } from '../memory/memory-types.js';
import { type LiveRun, type LiveRuns, createLiveRuns } from '../runs/live-runs.js';
import { type DescribeError, type RunListener, type RunService, createRunService } from '../runs/run-service.js';
import type { ClientToolDeclaration, RunState, RunStore } from '../runs/run-types.js';
import { definedOnly } from '../util/defined-only.js';
import { runAgentStep } from './agent-step.js';
import type { ChatEvent, TurnReply } from './chat-reply.js';
import { type TagFilters, recallSources, renderSourcesBlock } from './context-block.js';
import { type ConversationTurn, beginConversationTurn } from './conversation-turn.js';
import { type ConversationView, describeLoadedConversation } from './conversation-view.js';
import { estimatedFixedTokens } from './estimated-fixed-tokens.js';
import { embedQuestion, extractiveReply } from './extractive/extractive-reply.js';
import type { KnowledgeRetriever } from '../retrieval/knowledge.js';
import { SourceList } from './sources.js';
import { CHAT_TOP_K_DEFAULT, sourcesFor } from './window-fit.js';

export type { ChatEvent, ChatReply, ChatToolCall, PausedReply, RunView, TurnReply } from './chat-reply.js';
export type { ResumeAnswers } from '../runs/run-service.js';

const TOOL_SEARCH_THRESHOLD_DEFAULT = 20;
const RUN_RECONNECT_GRACE_MS_DEFAULT = 2_000;

/** Who listens to a turn's events: `seq` is the event's SSE id; `stream` sends the model's reply as `delta` events. */
export type ChatListener = RunListener<ChatEvent, TurnReply>;

export interface ChatRequest extends TagFilters, ChatListener {
  message: string;
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
  /** The agent's record as the caller already read it (null: none); read here when undefined. */
  agent?: Agent | null;
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
}

/** A turn's runs: the lifecycle of a paused, resumed or cancelled one is the run service's. */
export type ChatRuns = Pick<RunService<ChatEvent, TurnReply>, 'beginResume' | 'resume' | 'getRun' | 'cancelRun' | 'liveRun'>;

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

/** The chat's turns: recall, then an extractive reply or the agent loop, each turn of a model a run. */
export function createChatService(options: ChatServiceOptions): ChatService {
  const { tenantId, memories, knowledge, conversations, turns, agents, runs, agentRuntime: runtime } = options;
  const summarizers = new WeakMap<LlmProvider, ReturnType<typeof createLlmSummarizer>>();
  const summarizerFor = (provider: LlmProvider | undefined) => {
    if (!provider) return undefined;
    let summarizer = summarizers.get(provider);
    if (!summarizer) summarizers.set(provider, (summarizer = createLlmSummarizer(provider, { timeoutMs: options.summaryTimeoutMs ?? 20_000 })));
    return summarizer;
  };
  const compactionOf = (settings: AgentSettings | null, provider: LlmProvider | undefined): CompactionSettings => ({
    ...runtime.compactionFor(provider?.model),
    ...definedOnly(settings?.compaction ?? {}),
  });

  /** The turn's conversation, loaded (and refused when it is another agent's or user's). */
  const beginStored = (turn: {
    conversationId: string;
    agentId: string;
    userId: string | null;
    settings: AgentSettings | null;
    provider: LlmProvider | undefined;
    signal: AbortSignal | undefined;
    emit: (e: ChatEvent) => void;
    sentHistory?: readonly ChatMessage[];
    isNew?: boolean;
  }): Promise<ConversationTurn | undefined> =>
    conversations
      ? beginConversationTurn({
          store: conversations,
          afterTurn: options.afterTurn?.forConversation({
            tenantId,
            store: conversations,
            conversationId: turn.conversationId,
            agentId: turn.agentId,
            userId: turn.userId,
            llm: turn.provider,
            memoryExtraction: turn.settings?.memoryExtraction ?? options.memoryExtraction,
            compaction: compactionOf(turn.settings, turn.provider),
          }),
          conversationId: turn.conversationId,
          agentId: turn.agentId,
          userId: turn.userId,
          ...(turn.sentHistory ? { sentHistory: turn.sentHistory } : {}),
          ...(turn.isNew ? { isNew: true } : {}),
          settings: compactionOf(turn.settings, turn.provider),
          summarizer: summarizerFor(turn.provider),
          signal: turn.signal,
          settleTimeoutMs: options.compactionSettleTimeoutMs,
          onCompaction: (report) => turn.emit({ type: 'compaction', ...report }),
          onFallback: options.onSummaryFallback,
        })
      : Promise.resolve(undefined);

  const stepOptions = {
    memories,
    knowledge,
    runs,
    compactionOf,
    prices: options.prices,
    maxIterations: options.maxIterations,
    toolSearchThreshold: options.toolSearchThreshold ?? TOOL_SEARCH_THRESHOLD_DEFAULT,
    describeError: options.describeError,
  };

  const runService: RunService<ChatEvent, TurnReply> = createRunService<ChatEvent, TurnReply>({
    tenantId,
    runs,
    liveRuns: options.liveRuns ?? createLiveRuns<ChatEvent>({ graceMs: RUN_RECONNECT_GRACE_MS_DEFAULT }),
    runTtlSeconds: options.runTtlSeconds,
    describeError: options.describeError,
    errorEvent: (error) => ({ type: 'error', error }),
    async continueTurn(run, state, live, answers, listener) {
      const provider = runtime.llmFor(state.agent);
      if (!provider) throw new Error('No LLM is configured any more: the run cannot go on');
      const emit = (event: ChatEvent) => live.emit(event);
      const stored = await beginStored({
        conversationId: run.conversationId,
        agentId: run.agentId,
        userId: run.userId,
        settings: state.agent,
        provider,
        signal: live.signal,
        emit,
        sentHistory: state.sentHistory,
      });
      return runAgentStep(
        {
          runId: run.id,
          conversationId: run.conversationId,
          agentId: run.agentId,
          userId: run.userId,
          settings: state.agent,
          agentVersion: run.agentVersion,
          provider,
          request: state.request,
          clientTools: state.clientTools,
          userContent: state.userContent,
          sources: SourceList.from(state.sources),
          toolCalls: state.toolCalls,
          nextTurn: state.nextTurn,
          ...(state.sentHistory ? { sentHistory: state.sentHistory } : {}),
          ...(listener.threadKeyOf ? { threadKeyOf: listener.threadKeyOf } : {}),
          stored,
          live,
          stream: listener.stream ?? false,
        },
        { state: state.turn, ...answers },
        { ...stepOptions, runService },
      );
    },
  });

  async function chat(request: ChatRequest): Promise<TurnReply> {
    // A new conversation when no id is given; a given id continues that conversation, or starts
    // one under that id if it does not exist yet.
    const conversationId = request.conversationId ?? randomUUID();
    const runId = randomUUID();
    const { message, agentId } = request;
    const userId = request.userId ?? null;
    let seq = 0;
    let live: LiveRun<ChatEvent> | undefined;
    const emit = (event: ChatEvent) => {
      if (live) live.emit(event);
      else request.onEvent?.(event, ++seq);
    };
    try {
      request.signal?.throwIfAborted();
      await runService.assertNoWaitingRun(request.conversationId);
      const agent = request.agent !== undefined ? request.agent : agents ? await agents.get(agentId) : null;
      const settings = agent ? settingsOf(agent) : null;
      const agentVersion = agent?.version ?? null;
      const provider = runtime.llmFor(settings);
      if (provider) {
        // Recorded before anything runs, so that it can be looked up and cancelled while it does.
        await runs.create({ id: runId, agentId, userId, conversationId, agentVersion, status: 'running' });
        live = runService.startLive(runId, request, 0);
      }
      const signal = live?.signal ?? request.signal;
      const stored = await beginStored({
        conversationId,
        agentId,
        userId,
        settings,
        provider,
        signal,
        emit,
        sentHistory: request.history,
        isNew: request.conversationId === undefined,
      });
      const recall = settings?.recall;
      // A topK the request names is kept; the defaults shrink to what a small window affords.
      const affordable = (k: number) => (provider && live ? sourcesFor(compactionOf(settings, provider), k) : k);
      const topK = request.topK ?? affordable(CHAT_TOP_K_DEFAULT);
      const filters: TagFilters = {
        tagsAny: request.tagsAny ?? recall?.tagsAny,
        tagsAll: request.tagsAll ?? recall?.tagsAll,
        tagsNone: request.tagsNone ?? recall?.tagsNone,
      };
      const sources = new SourceList();
      const extractive = !provider || !live;
      // Without a model the answer weighs sentences by their cosine to the question.
      const questionVector = extractive ? embedQuestion(options.embedder, message, signal) : undefined;
      const recalled = await recallSources(sources, {
        query: message,
        agentId,
        userId,
        memoryTopK: request.topK ?? (recall?.memoryTopK !== undefined ? affordable(recall.memoryTopK) : topK),
        knowledgeTopK: request.topK ?? (recall?.knowledgeTopK !== undefined ? affordable(recall.knowledgeTopK) : topK),
        candidateK: request.candidateK ?? recall?.candidateK,
        reranker: recall?.reranker,
        // The extractive answer reads each document hit's whole passage; a model gets the chunks.
        passages: extractive,
        memories,
        knowledge,
        // Episodic recall needs stored conversations: other ones, this one's turns being its history.
        turns: conversations && turns ? { search: turns, conversationId } : undefined,
        ...(recall?.turnTopK !== undefined ? { turnTopK: recall.turnTopK } : {}),
        signal,
        ...definedOnly(filters),
      });
      // Without a model the reply emits it, numbered as its answer cites them.
      if (provider && live) emit({ type: 'retrieval', runId, conversationId, sources: recalled });

      if (!provider || !live) {
        const reply = await extractiveReply({ message, runId, conversationId, sources: recalled }, emit, {
          embedder: options.embedder,
          questionVector,
          userId,
          signal,
        });
        await stored?.finish([
          { message: { role: 'user', content: message }, metadata: agentVersion === null ? { runId } : { runId, agentVersion } },
          { message: { role: 'assistant', content: reply.answer, toolCalls: [] }, metadata: { citations: reply.citations, mode: reply.mode } },
        ]);
        const threadKey = request.threadKeyOf?.(reply);
        await runs.create({
          id: runId,
          agentId,
          userId,
          conversationId,
          agentVersion,
          status: 'completed',
          stopReason: 'completed',
          ...(threadKey !== undefined ? { threadKey } : {}),
        });
        emit({ type: 'done', reply });
        return reply;
      }
      return await runAgentStep(
        {
          runId,
          conversationId,
          agentId,
          userId,
          settings,
          agentVersion,
          provider,
          request: {
            message,
            ...definedOnly({ instructions: request.instructions, topK: request.topK, candidateK: request.candidateK, ...filters }),
          } as RunState['request'],
          clientTools: request.clientTools ?? [],
          // The sources travel in the user turn, not the system prompt: retrieved text must never
          // gain the authority of instructions.
          userContent: `${renderSourcesBlock(recalled)}\n\nQuestion:\n${message}`,
          sources,
          toolCalls: [],
          nextTurn: stored?.nextTurn ?? 1,
          ...(request.history ? { sentHistory: request.history } : {}),
          ...(request.threadKeyOf ? { threadKeyOf: request.threadKeyOf } : {}),
          stored,
          live,
          stream: request.stream ?? false,
        },
        undefined,
        { ...stepOptions, runService },
      );
    } catch (error) {
      const reason = live ? await runService.fail(runId, live, error) : error;
      emit({ type: 'error', error: reason });
      throw reason;
    } finally {
      live?.end();
    }
  }

  async function assertCanContinue(conversationId: string | undefined, agentId: string, userId?: string): Promise<void> {
    if (conversationId !== undefined && conversations && (await conversations.ownedByOther(conversationId, agentId, userId ?? null))) {
      throw new ConversationNotFoundError(conversationId, agentId);
    }
    await runService.assertNoWaitingRun(conversationId);
  }

  async function recordTurn(turn: RecordedTurn): Promise<{ conversationId: string; turn: number }> {
    if (!conversations) throw new Error('This chat stores no conversations');
    const { conversationId, agentId } = turn;
    const agent = agents ? await agents.get(agentId) : null;
    const settings = agent ? settingsOf(agent) : null;
    const stored = await beginStored({
      conversationId,
      agentId,
      userId: turn.userId ?? null,
      settings,
      provider: runtime.llmFor(settings),
      signal: turn.signal,
      emit: () => {},
    });
    const number = await stored!.finish([
      { message: { role: 'user', content: turn.user }, metadata: { recorded: true } },
      { message: { role: 'assistant', content: turn.assistant, toolCalls: [] }, metadata: { recorded: true } },
    ]);
    return { conversationId, turn: number };
  }

  async function describeConversation(id: string, agentId: string): Promise<ConversationView | null> {
    const loaded = await conversations?.load(id, agentId);
    if (!loaded) return null;
    const agent = agents ? await agents.get(agentId) : null;
    const settings = agent ? settingsOf(agent) : null;
    const compaction = compactionOf(settings, runtime.llmFor(settings));
    const lastQuestion = loaded.messages.findLast((m) => m.message.role === 'user')?.message.content ?? '';
    return describeLoadedConversation(loaded, compaction, estimatedFixedTokens({ settings, compaction, hasKnowledge: knowledge !== undefined, lastQuestion }));
  }

  return {
    chat,
    resume: runService.resume,
    beginResume: runService.beginResume,
    getRun: runService.getRun,
    cancelRun: runService.cancelRun,
    liveRun: runService.liveRun,
    assertCanContinue,
    recordTurn,
    describeConversation,
  };
}
