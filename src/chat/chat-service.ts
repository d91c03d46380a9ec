import { randomUUID } from 'node:crypto';
import { type AgentEvent, type StopReason, runAgentTurn } from '../agent/agent-loop.js';
import type { LlmProvider } from '../agent/llm-provider.js';
import type { PriceTable } from '../agent/pricing.js';
import { toToolSpec } from '../agent/tool.js';
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS } from '../compaction/compaction-config.js';
import { createLlmSummarizer } from '../compaction/summarizer.js';
import { estimateToolSpecTokens } from '../compaction/token-estimate.js';
import type { AfterTurnHooks } from '../conversations/after-turn-hooks.js';
import { ConversationNotFoundError, type ConversationStore } from '../conversations/conversation-types.js';
import type { TurnSearch } from '../conversations/turn-search.js';
import type { MemoryStore } from '../memory/memory-types.js';
import { type Citation, extractCitations, toCitation } from './citations.js';
import { createChatTools } from './chat-tools.js';
import { type TagFilters, recallSources, renderSourcesBlock } from './context-block.js';
import { NO_LLM_NOTE, extractiveAnswer } from './extractive-answer.js';
import type { KnowledgeRetriever } from './knowledge-retriever.js';
import { type Source, SourceList } from './sources.js';
import { buildSystemPrompt } from './system-prompt.js';
import { type CompactionReport, type ConversationTurn, beginConversationTurn } from './conversation-turn.js';
import { type ConversationView, describeLoadedConversation } from './conversation-view.js';

export const CHAT_TOP_K_DEFAULT = 5;
/** Tool results are for the model; the client gets a preview, not a second copy of every source. */
const TOOL_RESULT_PREVIEW_CHARS = 500;

export interface ChatRequest extends TagFilters {
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
  /** Stream the model's reply (deltas as `delta` events); the result is the same either way. */
  stream?: boolean | undefined;
  signal?: AbortSignal | undefined;
  onEvent?: ((event: ChatEvent) => void) | undefined;
}

export interface ChatToolCall {
  id: string;
  name: string;
  /** Parsed when the model sent valid JSON, else the raw text. */
  arguments: unknown;
  result: string;
  isError: boolean;
}

export interface ChatReply {
  conversationId: string;
  answer: string;
  citations: Citation[];
  toolCalls: ChatToolCall[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  /** Null when no price is known for the model (or no model ran). */
  costUsd: number | null;
  stopReason: StopReason;
  mode: 'llm' | 'extractive';
  /** Set when the reply needs a word of explanation (e.g. why it is extractive). */
  note?: string;
}

export type ChatEvent =
  | { type: 'retrieval'; conversationId: string; sources: Source[] }
  | { type: 'delta'; text: string }
  | { type: 'tool_start'; id: string; name: string; arguments: unknown }
  | { type: 'tool_end'; id: string; name: string; isError: boolean; result: string; sources: Source[] }
  | ({ type: 'compaction' } & CompactionReport)
  | { type: 'done'; reply: ChatReply }
  | { type: 'error'; error: unknown };

export interface ChatServiceOptions {
  /** The tenant the stores below belong to; told to the after-turn hooks. */
  tenantId: string;
  memories: MemoryStore;
  knowledge?: KnowledgeRetriever | undefined;
  /** Without one, replies are extractive. */
  llm?: LlmProvider | undefined;
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
  /** Told when a summary fell back to the rules. */
  onSummaryFallback?: ((error: unknown) => void) | undefined;
}

export interface ChatService {
  chat(request: ChatRequest): Promise<ChatReply>;
  /**
   * Throws ConversationNotFoundError when `conversationId` is another agent's (or another
   * tenant's, or another user's): checked before a reply starts streaming, so the refusal is a
   * plain error reply.
   */
  assertCanContinue(conversationId: string | undefined, agentId: string, userId?: string | undefined): Promise<void>;
  /** The stored conversation with what it costs in a prompt; null when the agent has none by that id. */
  describeConversation(id: string, agentId: string): Promise<ConversationView | null>;
}

export function createChatService(options: ChatServiceOptions): ChatService {
  const { tenantId, memories, knowledge, llm, prices, conversations, turns } = options;
  const compaction = options.compaction ?? DEFAULT_COMPACTION_SETTINGS;
  const summarizer = llm ? createLlmSummarizer(llm, { timeoutMs: options.summaryTimeoutMs ?? 20_000 }) : undefined;

  async function chat(request: ChatRequest): Promise<ChatReply> {
    // A new conversation when no id is given; a given id continues that conversation, or starts
    // one under that id if it does not exist yet.
    const conversationId = request.conversationId ?? randomUUID();
    const { message, agentId, signal, onEvent } = request;
    const userId = request.userId ?? null;
    const topK = request.topK ?? CHAT_TOP_K_DEFAULT;
    const filters: TagFilters = { tagsAny: request.tagsAny, tagsAll: request.tagsAll, tagsNone: request.tagsNone };
    const sources = new SourceList();
    try {
      signal?.throwIfAborted();
      const stored = conversations
        ? await beginConversationTurn({
            store: conversations,
            afterTurn: options.afterTurn?.forConversation({ tenantId, store: conversations, conversationId, agentId, userId, llm }),
            conversationId,
            agentId,
            userId,
            settings: compaction,
            summarizer,
            signal,
            onCompaction: (report) => onEvent?.({ type: 'compaction', ...report }),
            onFallback: options.onSummaryFallback,
          })
        : undefined;
      const recalled = await recallSources(sources, {
        query: message,
        agentId,
        userId,
        topK,
        candidateK: request.candidateK,
        memories,
        knowledge,
        // Episodic recall needs stored conversations: other ones, this one's turns being its history.
        turns: conversations && turns ? { search: turns, conversationId } : undefined,
        signal,
        ...filters,
      });
      onEvent?.({ type: 'retrieval', conversationId, sources: recalled });

      const reply = llm
        ? await answerWithLlm(llm, { request, conversationId, sources, recalled, filters, stored })
        : answerExtractively(message, conversationId, recalled, onEvent);
      if (!llm) {
        await stored?.finish([
          { message: { role: 'user', content: message } },
          { message: { role: 'assistant', content: reply.answer, toolCalls: [] }, metadata: { citations: reply.citations, mode: reply.mode } },
        ]);
      }
      onEvent?.({ type: 'done', reply });
      return reply;
    } catch (error) {
      onEvent?.({ type: 'error', error });
      throw error;
    }
  }

  async function answerWithLlm(
    provider: LlmProvider,
    turn: {
      request: ChatRequest;
      conversationId: string;
      sources: SourceList;
      recalled: Source[];
      filters: TagFilters;
      stored: ConversationTurn | undefined;
    },
  ): Promise<ChatReply> {
    const { request, conversationId, sources, recalled, filters, stored } = turn;
    const { onEvent } = request;
    const toolSources = new Map<string, Source[]>();
    const toolCalls: ChatToolCall[] = [];
    const slots = new Map<string, number>();
    const tools = createChatTools({
      memories,
      knowledge,
      agentId: request.agentId,
      userId: request.userId ?? null,
      actor: { type: 'tool', conversationId, turn: stored?.nextTurn ?? 1 },
      filters,
      sources,
      onSources: (id, added) => toolSources.set(id, added),
    });
    const onAgentEvent = (event: AgentEvent) => {
      if (event.type === 'delta') return onEvent?.({ type: 'delta', text: event.text });
      const { id, name } = event.call;
      const args = parseArguments(event.call.arguments);
      if (event.type === 'tool_start') {
        // Tools run concurrently and finish in any order; the reply lists them in the order the model asked.
        slots.set(id, toolCalls.length);
        toolCalls.push({ id, name, arguments: args, result: '', isError: false });
        return onEvent?.({ type: 'tool_start', id, name, arguments: args });
      }
      const summary = { id, name, arguments: args, result: preview(event.result.content), isError: event.result.isError };
      const slot = slots.get(id);
      if (slot === undefined) toolCalls.push(summary);
      else toolCalls[slot] = summary;
      onEvent?.({ type: 'tool_end', id, name, isError: summary.isError, result: summary.result, sources: toolSources.get(id) ?? [] });
    };
    const result = await runAgentTurn({
      provider,
      systemPrompt: buildSystemPrompt({ hasKnowledge: knowledge !== undefined }),
      // The sources travel in the user turn, not the system prompt: retrieved text must never
      // gain the authority of instructions.
      messages: [...(stored?.history ?? []), { role: 'user', content: `${renderSourcesBlock(recalled)}\n\nQuestion:\n${request.message}` }],
      tools,
      ...(stored ? { hooks: stored.compactionHook(estimateToolSpecTokens(tools.map(toToolSpec))) } : {}),
      ...(options.maxIterations !== undefined ? { maxIterations: options.maxIterations } : {}),
      signal: request.signal,
      onEvent: onAgentEvent,
      stream: request.stream ?? false,
      prices,
    });
    const citations = extractCitations(result.text, sources.all());
    // The question is stored without this turn's sources: they were recalled for it, and a later
    // turn recalls its own (old source numbers would only collide with the new ones).
    await stored?.finish([
      { message: { role: 'user', content: request.message } },
      ...result.newMessages.map((message, i, all) => ({
        message,
        ...(i === all.length - 1 ? { metadata: { citations, stopReason: result.stopReason } } : {}),
      })),
    ]);
    return {
      conversationId,
      answer: result.text,
      citations,
      toolCalls,
      usage: result.usage,
      costUsd: result.costUsd ?? null,
      stopReason: result.stopReason,
      mode: 'llm',
    };
  }

  async function assertCanContinue(conversationId: string | undefined, agentId: string, userId?: string | undefined): Promise<void> {
    if (conversationId !== undefined && conversations && (await conversations.ownedByOther(conversationId, agentId, userId ?? null))) {
      throw new ConversationNotFoundError(conversationId, agentId);
    }
  }

  async function describeConversation(id: string, agentId: string): Promise<ConversationView | null> {
    const loaded = await conversations?.load(id, agentId);
    return loaded ? describeLoadedConversation(loaded, compaction) : null;
  }

  return { chat, assertCanContinue, describeConversation };
}

function answerExtractively(
  message: string,
  conversationId: string,
  sources: Source[],
  onEvent: ChatRequest['onEvent'],
): ChatReply {
  const { answer, citedIds } = extractiveAnswer(message, sources);
  // One delta, so a streaming client renders both modes with the same code.
  onEvent?.({ type: 'delta', text: answer });
  const byId = new Map(sources.map((s) => [s.id, s]));
  return {
    conversationId,
    answer,
    // From the ids picked, not by parsing the answer: source text may itself contain "[2]".
    citations: citedIds.flatMap((id) => {
      const source = byId.get(id);
      return source ? [toCitation(source)] : [];
    }),
    toolCalls: [],
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    costUsd: null,
    stopReason: 'completed',
    mode: 'extractive',
    note: NO_LLM_NOTE,
  };
}

function parseArguments(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function preview(text: string): string {
  return text.length <= TOOL_RESULT_PREVIEW_CHARS ? text : `${text.slice(0, TOOL_RESULT_PREVIEW_CHARS)}…`;
}
