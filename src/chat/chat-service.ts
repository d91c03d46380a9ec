import { randomUUID } from 'node:crypto';
import { type AgentEvent, type AgentTurnState, type ApprovalDecision, type PendingCalls, runAgentTurn } from '../llm/agent-loop.js';
import { AbortedError } from '../llm/llm-errors.js';
import { TOOL_SEARCH_SPEC } from '../llm/tool-search.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { PriceTable } from '../llm/pricing.js';
import { toToolSpec } from '../llm/tool.js';
import { type AgentSettings, approvalTools, permittedTools, settingsOf } from '../agents/agent-config.js';
import type { AgentStore } from '../agents/agent-store.js';
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS } from '../compaction/compaction-config.js';
import { createLlmSummarizer } from '../compaction/summarizer.js';
import { estimateMessagesTokens, estimateToolSpecTokens } from '../compaction/token-estimate.js';
import type { AfterTurnHooks } from '../conversations/after-turn-hooks.js';
import { ConversationNotFoundError, type ConversationStore } from '../conversations/conversation-types.js';
import type { TurnSearch } from '../conversations/turn-search.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { MemoryStore } from '../memory/memory-types.js';
import { toClientTools } from '../runs/client-tools.js';
import { type LiveRun, type LiveRuns, createLiveRuns } from '../runs/live-runs.js';
import {
  type ClientToolDeclaration,
  PAUSED_STATUSES,
  RunCancelledError,
  RunConflictError,
  RunInputError,
  RunNotFoundError,
  type Run,
  type RunState,
  type RunStore,
} from '../runs/run-types.js';
import { type ChatEvent, type ChatReply, type ChatToolCall, type PausedReply, type RunView, type TurnReply, toolArgumentsOf } from './chat-reply.js';
import { extractCitations, toCitation } from './citations.js';
import { TOOL_TOP_K_MAX, createChatTools } from './chat-tools.js';
import { TYPICAL_SOURCE_TOKENS, recallTurnsBudget, sourcesFor } from './window-fit.js';
import { type TagFilters, recallSources, renderSourcesBlock } from './context-block.js';
import { type ExtractiveOptions, NO_LLM_NOTE, extractiveAnswer } from './extractive/extractive-answer.js';
import type { KnowledgeRetriever } from './knowledge-retriever.js';
import { type Source, SourceList } from './sources.js';
import type { ChatMessage } from '../llm/messages.js';
import { buildSystemPrompt } from './system-prompt.js';
import { type ConversationTurn, beginConversationTurn } from './conversation-turn.js';
import { type ConversationView, describeLoadedConversation } from './conversation-view.js';

export type { ChatEvent, ChatReply, ChatToolCall, PausedReply, RunView, TurnReply } from './chat-reply.js';

export const CHAT_TOP_K_DEFAULT = 5;
/** Tool results are for the model; the client gets a preview, not a second copy of every source. */
const TOOL_RESULT_PREVIEW_CHARS = 500;
export const RUN_TTL_SECONDS_DEFAULT = 3600;
export const TOOL_SEARCH_THRESHOLD_DEFAULT = 20;
export const RUN_RECONNECT_GRACE_MS_DEFAULT = 2_000;

/** Who listens to a turn's events: `seq` is the event's SSE id. */
export interface ChatListener {
  onEvent?: ((event: ChatEvent, seq: number) => void) | undefined;
  /**
   * Fires when this listener has gone (a streaming client disconnected). The run goes on for a
   * grace period, in which a client may reconnect to its events; then it is aborted.
   */
  gone?: AbortSignal | undefined;
  /** Aborts the turn at once (a JSON client that disconnected: nobody can reconnect to it). */
  signal?: AbortSignal | undefined;
  /** Stream the model's reply (deltas as `delta` events); the result is the same either way. */
  stream?: boolean | undefined;
}

export interface ChatRequest extends TagFilters, ChatListener {
  message: string;
  agentId: string;
  /**
   * The user the turn is with: memories are recalled from theirs and the agent's shared ones, the
   * tools write theirs, past turns come from their conversations. Fixed on a conversation by its
   * first turn. Absent: no user (shared memories only).
   */
  userId?: string | undefined;
  conversationId?: string | undefined;
  topK?: number | undefined;
  /** Document candidates retrieved before reranking cuts them to `topK`. */
  candidateK?: number | undefined;
  /** Tools the client runs; a call to one pauses the turn until its output is submitted. */
  clientTools?: ClientToolDeclaration[] | undefined;
}

/** Answers to a paused run: tool outputs (`requires_action`) or approval decisions (`requires_approval`). */
export interface ResumeAnswers {
  runId: string;
  toolOutputs?: Array<{ toolCallId: string; output: string }> | undefined;
  decisions?: Array<{ toolCallId: string; approve: boolean; reason?: string | undefined }> | undefined;
}

export interface ResumeRequest extends ResumeAnswers, ChatListener {}

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
  knowledge?: KnowledgeRetriever | undefined;
  /** Without one, replies are extractive. */
  llm?: LlmProvider | undefined;
  /** The app's embedder: an extractive reply weighs sentences by their cosine to the question too. */
  embedder?: Pick<Embedder, 'embed'> | undefined;
  prices?: PriceTable | undefined;
  maxIterations?: number;
  /** Stores conversations; without it each turn stands alone. */
  conversations?: ConversationStore | undefined;
  /** Past turns of the agent's other conversations, recalled beside memories and documents when conversations are stored. */
  turns?: TurnSearch | undefined;
  /** Run on each stored turn after the reply (the checkpoint, ...); none when undefined. */
  afterTurn?: AfterTurnHooks | undefined;
  /** The model's window and compaction trigger; defaults suit an 8k-token model. */
  compaction?: CompactionSettings | undefined;
  /** How long a summarising request may take before the rule-based fallback is used. */
  summaryTimeoutMs?: number | undefined;
  /** How long a turn waits for the previous turn's checkpoint and summary work still running. */
  compactionSettleTimeoutMs?: number | undefined;
  /** Told when a summary fell back to the rules. */
  onSummaryFallback?: ((error: unknown) => void) | undefined;
  /** Agents' settings by `agentId`; without a store (or a record) a turn runs on the deployment's defaults. */
  agents?: AgentStore | undefined;
  agentRuntime?: AgentRuntime | undefined;
  /** Where runs are recorded, and paused ones kept until resumed. */
  runs: RunStore;
  /** Runs in progress in this process (cancel, reconnect); one per process, shared by tenants. */
  liveRuns?: LiveRuns<ChatEvent> | undefined;
  /** A paused run left unanswered this long expires. */
  runTtlSeconds?: number | undefined;
  /** With more tools than this, the model sees `tool_search` and what it found instead of all of them. */
  toolSearchThreshold?: number | undefined;
  /** Whether turns are read for facts when the agent does not say (MEMORY_EXTRACTION). */
  memoryExtraction?: boolean | undefined;
  /**
   * What a failed run records of its error, as the client would be told it (`GET /v1/runs/:id`):
   * the API's error body, so that internals stay out of it. Default: `turn_failed`, no details.
   */
  describeError?: ((error: unknown) => { code: string; message: string }) | undefined;
}

export interface ChatService {
  /** One turn: the answer, or a pause for the client's tools or a person's approval. */
  chat(request: ChatRequest): Promise<TurnReply>;
  /** Continues a paused run with the answers it waits for. */
  resume(request: ResumeRequest): Promise<TurnReply>;
  /**
   * Checks the answers and claims the run (a 404, 409 or 400 is thrown here, before any reply
   * starts streaming), then returns what goes on with the turn.
   */
  beginResume(request: ResumeAnswers): Promise<(listener: ChatListener) => Promise<TurnReply>>;
  getRun(runId: string): Promise<RunView>;
  /** Aborts a running run (its model call and tools) or drops a paused one. */
  cancelRun(runId: string): Promise<RunView>;
  /** A run in progress in this process, whose events can be listened to; undefined otherwise. */
  liveRun(runId: string): LiveRun<ChatEvent> | undefined;
  /**
   * Throws ConversationNotFoundError when `conversationId` is another agent's (or another
   * tenant's, or another user's): checked before a reply starts streaming, so the refusal is a
   * plain error reply.
   */
  assertCanContinue(conversationId: string | undefined, agentId: string, userId?: string | undefined): Promise<void>;
  /** The stored conversation with what it costs in a prompt; null when the agent has none by that id. */
  describeConversation(id: string, agentId: string): Promise<ConversationView | null>;
}

/** Everything a turn of a run needs, whether it starts now or resumes from a stored state. */
interface RunTurn {
  runId: string;
  conversationId: string;
  agentId: string;
  userId: string | null;
  settings: AgentSettings | null;
  agentVersion: number | null;
  provider: LlmProvider;
  request: RunState['request'];
  clientTools: ClientToolDeclaration[];
  userContent: string;
  sources: SourceList;
  toolCalls: ChatToolCall[];
  nextTurn: number;
  stored: ConversationTurn | undefined;
  live: LiveRun<ChatEvent>;
  stream: boolean;
}

export function createChatService(options: ChatServiceOptions): ChatService {
  const { tenantId, memories, knowledge, prices, conversations, turns, agents, runs } = options;
  const baseCompaction = options.compaction ?? DEFAULT_COMPACTION_SETTINGS;
  const runtime: AgentRuntime = options.agentRuntime ?? {
    llmFor: () => options.llm,
    compactionFor: () => baseCompaction,
  };
  const liveRuns = options.liveRuns ?? createLiveRuns<ChatEvent>({ graceMs: RUN_RECONNECT_GRACE_MS_DEFAULT });
  const runTtlMs = (options.runTtlSeconds ?? RUN_TTL_SECONDS_DEFAULT) * 1000;
  const summarizers = new WeakMap<LlmProvider, ReturnType<typeof createLlmSummarizer>>();
  const summarizerFor = (provider: LlmProvider | undefined) => {
    if (!provider) return undefined;
    let summarizer = summarizers.get(provider);
    if (!summarizer) summarizers.set(provider, (summarizer = createLlmSummarizer(provider, { timeoutMs: options.summaryTimeoutMs ?? 20_000 })));
    return summarizer;
  };
  const compactionOf = (settings: AgentSettings | null, provider: LlmProvider | undefined): CompactionSettings => {
    const base = settings?.model !== undefined || settings?.provider !== undefined ? runtime.compactionFor(provider?.model) : baseCompaction;
    return { ...base, ...definedOnly(settings?.compaction ?? {}) };
  };

  /** The turn's conversation, loaded (and refused when it is another agent's or user's). */
  const beginStored = (turn: { conversationId: string; agentId: string; userId: string | null; settings: AgentSettings | null; provider: LlmProvider | undefined; signal: AbortSignal | undefined; emit: (e: ChatEvent) => void }) =>
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
          settings: compactionOf(turn.settings, turn.provider),
          summarizer: summarizerFor(turn.provider),
          signal: turn.signal,
          settleTimeoutMs: options.compactionSettleTimeoutMs,
          onCompaction: (report) => turn.emit({ type: 'compaction', ...report }),
          onFallback: options.onSummaryFallback,
        })
      : Promise.resolve(undefined);

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
      await assertNoWaitingRun(request.conversationId);
      const agent = agents ? await agents.get(agentId) : null;
      const settings = agent ? settingsOf(agent) : null;
      const provider = runtime.llmFor(settings);
      if (provider) {
        // Recorded before anything runs, so that it can be looked up and cancelled while it does.
        await runs.create({ id: runId, agentId, userId, conversationId, agentVersion: agent?.version ?? null, status: 'running' });
        live = startLive(runId, request, 0);
      }
      const signal = live?.signal ?? request.signal;
      const stored = await beginStored({ conversationId, agentId, userId, settings, provider, signal, emit });
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
      // Without a model the answer weighs sentences by their cosine to the question: its vector
      // is computed beside retrieval rather than after it.
      const questionVector = !provider || !live ? embedQuestion(options.embedder, message, signal) : undefined;
      const recalled = await recallSources(sources, {
        query: message,
        agentId,
        userId,
        memoryTopK: request.topK ?? (recall?.memoryTopK !== undefined ? affordable(recall.memoryTopK) : topK),
        knowledgeTopK: request.topK ?? (recall?.knowledgeTopK !== undefined ? affordable(recall.knowledgeTopK) : topK),
        candidateK: request.candidateK ?? recall?.candidateK,
        reranker: recall?.reranker,
        // The extractive answer reads each document hit's whole passage; a model gets the chunks.
        passages: !provider || !live,
        memories,
        knowledge,
        // Episodic recall needs stored conversations: other ones, this one's turns being its history.
        turns: conversations && turns ? { search: turns, conversationId } : undefined,
        signal,
        ...definedOnly(filters),
      });
      emit({ type: 'retrieval', runId, conversationId, sources: recalled });

      if (!provider || !live) {
        const reply = await answerExtractively(message, runId, conversationId, recalled, emit, { embedder: options.embedder, questionVector, signal });
        await stored?.finish([
          { message: { role: 'user', content: message }, metadata: turnMetadata(runId, agent?.version ?? null) },
          { message: { role: 'assistant', content: reply.answer, toolCalls: [] }, metadata: { citations: reply.citations, mode: reply.mode } },
        ]);
        await runs.create({ id: runId, agentId, userId, conversationId, agentVersion: agent?.version ?? null, status: 'completed', stopReason: 'completed' });
        emit({ type: 'done', reply });
        return reply;
      }
      return await runTurn(
        {
          runId,
          conversationId,
          agentId,
          userId,
          settings,
          agentVersion: agent?.version ?? null,
          provider,
          request: { message, ...definedOnly({ topK: request.topK, candidateK: request.candidateK, ...filters }) } as RunState['request'],
          clientTools: request.clientTools ?? [],
          // The sources travel in the user turn, not the system prompt: retrieved text must never
          // gain the authority of instructions.
          userContent: `${renderSourcesBlock(recalled)}\n\nQuestion:\n${message}`,
          sources,
          toolCalls: [],
          nextTurn: stored?.nextTurn ?? 1,
          stored,
          live,
          stream: request.stream ?? false,
        },
        undefined,
      );
    } catch (error) {
      if (live) await recordFailure(runId, live, error);
      emit({ type: 'error', error: live ? reasonFor(live, error) : error });
      throw live ? reasonFor(live, error) : error;
    } finally {
      live?.end();
    }
  }

  function startLive(runId: string, listener: ChatListener, firstSeq: number): LiveRun<ChatEvent> {
    // Only a streaming client's run is abandoned when it leaves: a JSON client's leaving aborts it through `signal`.
    const live = liveRuns.start(tenantId, runId, { firstSeq, abandonable: listener.gone !== undefined });
    if (listener.onEvent) live.listen({ onEvent: (seq, event) => listener.onEvent?.(event, seq), gone: listener.gone });
    if (listener.signal) {
      const { signal } = listener;
      if (signal.aborted) live.cancel(signal.reason);
      else signal.addEventListener('abort', () => live.cancel(signal.reason), { once: true });
    }
    return live;
  }

  /** A cancelled run's error is the cancellation, whatever the aborted call threw. */
  function reasonFor(live: LiveRun<ChatEvent>, error: unknown): unknown {
    return live.signal.reason instanceof RunCancelledError ? live.signal.reason : error;
  }

  async function recordFailure(runId: string, live: LiveRun<ChatEvent>, error: unknown): Promise<void> {
    const aborted = live.signal.aborted || error instanceof AbortedError;
    const described = reasonFor(live, error);
    const body =
      described instanceof RunCancelledError
        ? { code: 'run_cancelled', message: described.message }
        : aborted
          ? { code: 'client_closed_request', message: 'The client went away, and the turn was aborted' }
          : (options.describeError?.(described) ?? { code: 'turn_failed', message: 'The turn failed' });
    await runs.update(runId, { status: aborted ? 'cancelled' : 'failed', error: body, state: null, expiresAt: null }, ['running']).catch(() => {});
  }

  /** Runs (or resumes) the model and tools of a turn to its end or its next pause. */
  async function runTurn(turn: RunTurn, resume: { state: AgentTurnState; outputs?: Map<string, string>; decisions?: Map<string, ApprovalDecision> } | undefined): Promise<TurnReply> {
    const { runId, conversationId, settings, provider, sources, toolCalls, stored, live } = turn;
    const emit = (event: ChatEvent) => live.emit(event);
    const toolSources = new Map<string, Source[]>();
    const slots = new Map<string, number>(toolCalls.map((call, i) => [call.id, i]));
    const permitted = permittedTools(settings ?? undefined);
    const compaction = compactionOf(settings, provider);
    const tools = createChatTools({
      memories,
      knowledge,
      agentId: turn.agentId,
      userId: turn.userId,
      actor: { type: 'tool', conversationId, turn: turn.nextTurn },
      filters: { tagsAny: turn.request.tagsAny, tagsAll: turn.request.tagsAll, tagsNone: turn.request.tagsNone },
      sources,
      onSources: (id, added) => toolSources.set(id, added),
      topKCap: sourcesFor(compaction, TOOL_TOP_K_MAX),
      conversation: stored ? { turns: stored.turns, budgetTokens: recallTurnsBudget(compaction) } : undefined,
    }).filter((tool) => permitted.has(tool.name as never));
    const approvals = settings ? approvalTools(settings) : undefined;
    const clientTools = toClientTools(turn.clientTools);
    const onAgentEvent = (event: AgentEvent) => {
      if (event.type === 'delta') return emit({ type: 'delta', text: event.text });
      const { id, name } = event.call;
      const args = toolArgumentsOf(event.call.arguments);
      if (event.type === 'tool_start') {
        // Tools run concurrently and finish in any order; the reply lists them in the order the model asked.
        slots.set(id, toolCalls.length);
        toolCalls.push({ id, name, arguments: args, result: '', isError: false });
        return emit({ type: 'tool_start', id, name, arguments: args });
      }
      const summary = { id, name, arguments: args, result: preview(event.result.content), isError: event.result.isError };
      const slot = slots.get(id);
      if (slot === undefined) toolCalls.push(summary);
      else toolCalls[slot] = summary;
      emit({ type: 'tool_end', id, name, isError: summary.isError, result: summary.result, sources: toolSources.get(id) ?? [] });
    };
    const budget = settings?.budget;
    const result = await runAgentTurn({
      provider,
      systemPrompt: buildSystemPrompt({ hasKnowledge: knowledge !== undefined, tools: new Set(tools.map((t) => t.name)), instructions: settings?.instructions }),
      messages: [...(stored?.history ?? []), { role: 'user', content: turn.userContent }],
      tools,
      clientTools,
      ...(approvals ? { needsApproval: (call) => approvals.has(call.name) } : {}),
      toolSearchThreshold: options.toolSearchThreshold ?? TOOL_SEARCH_THRESHOLD_DEFAULT,
      ...(resume ? { resume } : {}),
      hooks: [
        // A cancel from another process reaches this one through the run's row, checked before each model call.
        {
          beforeLlm: async () => {
            if ((await runs.statusOf(runId)) === 'cancelled') live.cancel(new RunCancelledError(runId));
          },
        },
        // Every tool the model may be sent counts against the window, the client's too.
        ...(stored ? [stored.compactionHook(estimateToolSpecTokens([...tools.map(toToolSpec), ...clientTools, TOOL_SEARCH_SPEC]))] : []),
      ],
      ...(settings?.maxIterations !== undefined ? { maxIterations: settings.maxIterations } : options.maxIterations !== undefined ? { maxIterations: options.maxIterations } : {}),
      ...(budget ? { budget: definedOnly({ maxTokens: budget.maxTokens, maxCostUsd: budget.maxUsd }) } : {}),
      signal: live.signal,
      onEvent: onAgentEvent,
      stream: turn.stream,
      ...(prices ? { prices } : {}),
    });
    const costUsd = result.costUsd ?? null;

    if (result.stopReason === 'paused') {
      const pending = result.pending!;
      const status = pending.approvals.length > 0 ? 'requires_approval' : 'requires_action';
      const expiresAt = new Date(Date.now() + runTtlMs);
      const state: RunState = {
        request: turn.request,
        agent: settings,
        userContent: turn.userContent,
        sources: sources.all(),
        toolCalls,
        clientTools: turn.clientTools,
        nextTurn: turn.nextTurn,
        turn: result.state,
        pending,
        // The pause event's own number: a resumed stream goes on after it.
        eventSeq: live.seq + 1,
      };
      // Not running any more: cancelled meanwhile (from another process, or between two model calls).
      if (!(await runs.update(runId, { status, usage: result.usage, state, expiresAt }, ['running']))) throw new RunCancelledError(runId);
      const reply = pausedReply({ runId, conversationId, status, pending, toolCalls, usage: result.usage, costUsd, expiresAt });
      emit({ type: 'paused', reply });
      return reply;
    }

    const citations = extractCitations(result.text, sources.all());
    // Claimed before the turn is stored: a run cancelled meanwhile is not stored, as cancelling promises.
    if (!(await runs.update(runId, { status: 'completed', usage: result.usage, stopReason: result.stopReason, state: null, expiresAt: null }, ['running']))) {
      throw new RunCancelledError(runId);
    }
    try {
      // The question is stored without this turn's sources: they were recalled for it, and a later
      // turn recalls its own (old source numbers would only collide with the new ones).
      await stored?.finish([
        { message: { role: 'user', content: turn.request.message }, metadata: turnMetadata(runId, turn.agentVersion) },
        ...result.newMessages.map((message, i, all) => ({
          message,
          ...(i === all.length - 1 ? { metadata: { citations, stopReason: result.stopReason } } : {}),
        })),
      ]);
    } catch (error) {
      const body = options.describeError?.(error) ?? { code: 'turn_failed', message: 'The turn could not be stored' };
      await runs.update(runId, { status: 'failed', error: body }, ['completed']).catch(() => {});
      throw error;
    }
    const reply: ChatReply = {
      runId,
      status: 'completed',
      conversationId,
      answer: result.text,
      citations,
      toolCalls,
      usage: result.usage,
      costUsd,
      stopReason: result.stopReason,
      mode: 'llm',
    };
    emit({ type: 'done', reply });
    return reply;
  }

  async function resume(request: ResumeRequest): Promise<TurnReply> {
    return (await beginResume(request))(request);
  }

  async function beginResume(request: ResumeAnswers): Promise<(listener: ChatListener) => Promise<TurnReply>> {
    const { runId } = request;
    const loaded = await runs.load(runId);
    if (!loaded) throw new RunNotFoundError(runId);
    const { run, state } = loaded;
    const answering = request.toolOutputs !== undefined ? 'requires_action' : 'requires_approval';
    if (run.status === 'expired') throw new RunConflictError('run_expired', `Run ${runId} expired: it waited longer than its time to live`);
    if (run.status !== answering || !state) {
      const hint = PAUSED_STATUSES.includes(run.status) ? ` (it waits for ${run.status === 'requires_action' ? 'tool outputs' : 'approval decisions'})` : '';
      throw new RunConflictError('run_not_waiting', `Run ${runId} is ${run.status}${hint}`, { status: run.status });
    }
    const outputs = request.toolOutputs ? answersFor('toolOutputs', state.pending.clientCalls, request.toolOutputs, (a) => a.output) : undefined;
    const decisions = request.decisions
      ? answersFor('decisions', state.pending.approvals, request.decisions, (d): ApprovalDecision => ({ approve: d.approve, reason: d.reason }))
      : undefined;
    // Claimed with a compare-and-set: of two resumes of one pause, one wins and the other is a 409.
    if (!(await runs.update(runId, { status: 'running', expiresAt: null }, [answering]))) {
      throw new RunConflictError('run_not_waiting', `Run ${runId} is being resumed already`);
    }
    return (listener) => continueRun(run, state, listener, { ...(outputs ? { outputs } : {}), ...(decisions ? { decisions } : {}) });
  }

  async function continueRun(
    run: Run,
    state: RunState,
    listener: ChatListener,
    answers: { outputs?: Map<string, string>; decisions?: Map<string, ApprovalDecision> },
  ): Promise<TurnReply> {
    const runId = run.id;
    const live = startLive(runId, listener, state.eventSeq);
    try {
      const provider = runtime.llmFor(state.agent);
      if (!provider) throw new Error('No LLM is configured any more: the run cannot go on');
      const emit = (event: ChatEvent) => live.emit(event);
      const stored = await beginStored({ conversationId: run.conversationId, agentId: run.agentId, userId: run.userId, settings: state.agent, provider, signal: live.signal, emit });
      return await runTurn(
        {
          runId,
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
          stored,
          live,
          stream: listener.stream ?? false,
        },
        { state: state.turn, ...answers },
      );
    } catch (error) {
      await recordFailure(runId, live, error);
      live.emit({ type: 'error', error: reasonFor(live, error) });
      throw reasonFor(live, error);
    } finally {
      live.end();
    }
  }

  async function getRun(runId: string): Promise<RunView> {
    const loaded = await runs.load(runId);
    if (!loaded) throw new RunNotFoundError(runId);
    return runView(loaded.run, loaded.state);
  }

  async function cancelRun(runId: string): Promise<RunView> {
    const body = { code: 'run_cancelled', message: `Run ${runId} was cancelled` };
    // From the status just read, so that a resume or an end in between is seen (and read again).
    for (let attempt = 0; attempt < 3; attempt++) {
      const run = await runs.get(runId);
      if (!run) throw new RunNotFoundError(runId);
      if (run.status !== 'running' && !PAUSED_STATUSES.includes(run.status)) {
        throw new RunConflictError('run_not_waiting', `Run ${runId} is ${run.status}: only a running or waiting run can be cancelled`, { status: run.status });
      }
      if (await runs.update(runId, { status: 'cancelled', error: body, state: null, expiresAt: null }, [run.status])) {
        // Aborted here when it runs in this process; elsewhere, its next model call sees the row.
        if (run.status === 'running') liveRuns.get(tenantId, runId)?.cancel(new RunCancelledError(runId));
        return getRun(runId);
      }
    }
    throw new RunConflictError('run_not_waiting', `Run ${runId} kept changing while it was being cancelled; try again`);
  }

  async function assertCanContinue(conversationId: string | undefined, agentId: string, userId?: string | undefined): Promise<void> {
    if (conversationId !== undefined && conversations && (await conversations.ownedByOther(conversationId, agentId, userId ?? null))) {
      throw new ConversationNotFoundError(conversationId, agentId);
    }
    await assertNoWaitingRun(conversationId);
  }

  /**
   * A conversation whose run waits for the client takes no other turn until that run is answered,
   * cancelled or expired: the waiting turn comes first in its history, and is stored first.
   */
  async function assertNoWaitingRun(conversationId: string | undefined): Promise<void> {
    if (conversationId === undefined) return;
    const waiting = await runs.waitingIn(conversationId);
    if (waiting) {
      throw new RunConflictError('run_waiting', `Conversation ${conversationId} has a run waiting for the client (${waiting}): answer or cancel it first`, {
        runId: waiting,
      });
    }
  }

  async function describeConversation(id: string, agentId: string): Promise<ConversationView | null> {
    const loaded = await conversations?.load(id, agentId);
    if (!loaded) return null;
    const agent = agents ? await agents.get(agentId) : null;
    const settings = agent ? settingsOf(agent) : null;
    const provider = runtime.llmFor(settings);
    const compaction = compactionOf(settings, provider);
    return describeLoadedConversation(loaded, compaction, estimatedFixedTokens(settings, compaction, loaded));
  }

  /**
   * What the next request would carry besides the history when no turn measured it: this agent's
   * system prompt and tool definitions, and a question like the last one with the sources a turn recalls.
   */
  function estimatedFixedTokens(settings: AgentSettings | null, compaction: CompactionSettings, loaded: { messages: readonly { message: ChatMessage }[] }): number {
    const permitted = permittedTools(settings ?? undefined);
    const tools = createChatTools({
      memories,
      knowledge,
      agentId: '',
      userId: null,
      actor: { type: 'tool', conversationId: '', turn: 0 },
      filters: {},
      sources: new SourceList(),
      conversation: { turns: [{ turn: 1, firstSeq: 1, lastSeq: 1, messages: [] }], budgetTokens: 0 },
    }).filter((tool) => permitted.has(tool.name as never));
    const systemPrompt = buildSystemPrompt({ hasKnowledge: knowledge !== undefined, tools: new Set(tools.map((t) => t.name)), instructions: settings?.instructions });
    const lastQuestion = loaded.messages.findLast((m) => m.message.role === 'user')?.message.content ?? '';
    const sourceCount = sourcesFor(compaction, settings?.recall?.memoryTopK ?? CHAT_TOP_K_DEFAULT) + (knowledge ? sourcesFor(compaction, settings?.recall?.knowledgeTopK ?? CHAT_TOP_K_DEFAULT) : 0);
    return (
      estimateMessagesTokens([{ role: 'system', content: systemPrompt }, { role: 'user', content: lastQuestion }]) +
      estimateToolSpecTokens(tools.map(toToolSpec)) +
      sourceCount * TYPICAL_SOURCE_TOKENS
    );
  }

  return { chat, resume, beginResume, getRun, cancelRun, liveRun: (runId) => liveRuns.get(tenantId, runId), assertCanContinue, describeConversation };
}

/**
 * The answers to a run's pending calls, by call id: every pending call answered once. An id the
 * run is not waiting on (unknown, or answered already) is a conflict; a missing or repeated one
 * is the request's mistake.
 */
function answersFor<A extends { toolCallId: string }, V>(field: string, pending: readonly { id: string }[], answers: readonly A[], value: (answer: A) => V): Map<string, V> {
  const waiting = new Set(pending.map((c) => c.id));
  const byId = new Map<string, V>();
  for (const [i, answer] of answers.entries()) {
    if (byId.has(answer.toolCallId)) throw new RunInputError(`${field}.${i}.toolCallId`, `repeats tool call ${JSON.stringify(answer.toolCallId)}`);
    if (!waiting.has(answer.toolCallId)) {
      throw new RunConflictError('tool_call_not_pending', `Tool call ${JSON.stringify(answer.toolCallId)} is not waiting for an answer (unknown, or answered already)`, {
        toolCallId: answer.toolCallId,
      });
    }
    byId.set(answer.toolCallId, value(answer));
  }
  const missing = [...waiting].filter((id) => !byId.has(id));
  if (missing.length > 0) throw new RunInputError(field, `misses tool call${missing.length > 1 ? 's' : ''} ${missing.map((id) => JSON.stringify(id)).join(', ')}`);
  return byId;
}

/** What the stored turn records of its run: which run, and which agent version it ran with. */
function turnMetadata(runId: string, agentVersion: number | null): Record<string, unknown> {
  return agentVersion === null ? { runId } : { runId, agentVersion };
}

function pausedReply(input: {
  runId: string;
  conversationId: string;
  status: PausedReply['status'];
  pending: PendingCalls;
  toolCalls: ChatToolCall[];
  usage: ChatReply['usage'];
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

function waitingFor(status: string, pending: PendingCalls): Pick<PausedReply, 'requiredAction' | 'approvals'> {
  if (status === 'requires_approval') {
    return { approvals: pending.approvals.map((call) => ({ toolCallId: call.id, name: call.name, arguments: toolArgumentsOf(call.arguments) })) };
  }
  if (status === 'requires_action') {
    return {
      requiredAction: {
        type: 'submit_tool_outputs',
        toolCalls: pending.clientCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(toolArgumentsOf(call.arguments)) } })),
      },
    };
  }
  return {};
}

function runView(run: Run, state: RunState | null): RunView {
  return {
    ...run,
    expiresAt: run.expiresAt?.toISOString() ?? null,
    createdAt: run.createdAt.toISOString(),
    updatedAt: run.updatedAt.toISOString(),
    ...(state ? waitingFor(run.status, state.pending) : {}),
  };
}

async function answerExtractively(
  message: string,
  runId: string,
  conversationId: string,
  sources: Source[],
  emit: (event: ChatEvent) => void,
  options: Pick<ExtractiveOptions, 'embedder' | 'questionVector' | 'signal'>,
): Promise<ChatReply> {
  const { answer, citedIds, quotes } = await extractiveAnswer(message, sources, options);
  // One delta, so a streaming client renders both modes with the same code.
  emit({ type: 'delta', text: answer });
  const byId = new Map(sources.map((s) => [s.id, s]));
  return {
    runId,
    status: 'completed',
    conversationId,
    answer,
    // From the ids picked, not by parsing the answer: source text may itself contain "[2]".
    citations: citedIds.flatMap((id) => {
      const source = byId.get(id);
      if (!source) return [];
      const citation = toCitation(source);
      const quoted = quotes.get(id);
      return [citation.kind === 'document' && quoted ? { ...citation, quotes: quoted } : citation];
    }),
    toolCalls: [],
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    costUsd: null,
    stopReason: 'completed',
    mode: 'extractive',
    note: NO_LLM_NOTE,
  };
}

/** The question's vector, or undefined when there is no embedder; a failure is the answer's to handle. */
function embedQuestion(embedder: Pick<Embedder, 'embed'> | undefined, message: string, signal: AbortSignal | undefined): Promise<number[]> | undefined {
  if (!embedder) return undefined;
  const vector = embedder.embed([message], signal ? { signal } : undefined).then(([v]) => v!);
  // Handled where it is awaited; a turn that fails before then must not leave it unhandled.
  vector.catch(() => {});
  return vector;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function preview(text: string): string {
  return text.length <= TOOL_RESULT_PREVIEW_CHARS ? text : `${text.slice(0, TOOL_RESULT_PREVIEW_CHARS)}…`;
}
