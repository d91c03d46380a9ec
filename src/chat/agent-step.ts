import { type AgentSettings, approvalTools, permittedTools } from '../agents/agent-config.js';
import type { CompactionSettings } from '../compaction/compaction-config.js';
import { estimateToolSpecTokens } from '../compaction/token-estimate.js';
import { type AgentEvent, type AgentTurnState, type ApprovalDecision, runAgentTurn } from '../llm/agent-loop.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { ChatMessage, ImagePart } from '../llm/messages.js';
import type { PriceTable } from '../llm/pricing.js';
import { toolArgumentsOf } from '../llm/tool-arguments.js';
import { TOOL_SEARCH_SPEC } from '../llm/tool-search.js';
import { toToolSpec } from '../llm/tool.js';
import type { MemoryStore } from '../memory/memory-types.js';
import type { BlockStore } from '../blocks/block-types.js';
import { loadWorkingMemory } from '../blocks/block-turn.js';
import { toClientTools } from '../runs/client-tools.js';
import type { LiveRun } from '../runs/live-runs.js';
import type { DescribeError, RunService } from '../runs/run-service.js';
import type { Run } from '../runs/run-types.js';
import {
  type ClientToolDeclaration,
  RunCancelledError,
  type RunLineage,
  type RunState,
  type RunStore,
  type RunUsage,
  type WaitingChild,
} from '../runs/run-types.js';
import { ZERO_RUN_USAGE, addCost, addRunUsage } from '../runs/run-usage.js';
import type { TurnDelegation } from './turn-delegation.js';
import { definedOnly } from '../util/defined-only.js';
import type { ChatEvent, ChatReply, ChatToolCall, TurnReply } from './chat-reply.js';
import { TOOL_TOP_K_MAX, createChatTools } from './chat-tools.js';
import { extractCitations } from './citations.js';
import type { AttachmentStore } from '../conversations/attachment-store.js';
import type { ConversationTurn } from './conversation-turn.js';
import type { KnowledgeRetriever } from '../retrieval/knowledge.js';
import type { Source } from '../retrieval/source.js';
import type { SourceList } from './sources.js';
import { buildSystemPrompt } from './system-prompt.js';
import { loopEventOf, modelOptionsOf } from './turn-model-options.js';
import { type ToolImages, attachToolImages, storeHistoryImages, toolImageRefs, toolImagesHook } from './turn-images.js';
import { recallTurnsBudget, sourcesFor } from './window-fit.js';

/** Writes of a run's end, its first included, once its turn is stored. */
const END_ATTEMPTS = 3;

/** A turn that delegates waits on whole turns of other agents: its tools' default time limit. */
const DELEGATING_TOOL_TIMEOUT_MS = 600_000;

/** Tool results are for the model; the client gets a preview, not a second copy of every source. */
const TOOL_RESULT_PREVIEW_CHARS = 500;

/** Everything a model's turn needs, whether it starts now or resumes from a stored state. */
export interface AgentStep {
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
  /** The message's images, loaded for the model (their references are `request.images`). */
  images?: ImagePart[];
  /** Images client tools returned this turn, by tool call id (kept by reference with a paused run). */
  toolImages?: ToolImages;
  sources: SourceList;
  toolCalls: ChatToolCall[];
  nextTurn: number;
  /** The client's own history, when it sent one: kept with a paused run, so that its resumption is sent it again. */
  sentHistory?: ChatMessage[];
  /** See `RunListener.threadKeyOf`. */
  threadKeyOf?: (reply: TurnReply) => string | undefined;
  stored: ConversationTurn | undefined;
  live: LiveRun<ChatEvent>;
  stream: boolean;
  /** A delegated run's place under its lead. */
  lineage?: RunLineage;
  /** Delegations a resumed turn waited on, and what ended ones spent before the pause. */
  waitingChildren?: WaitingChild[];
  delegatedUsage?: RunState['delegatedUsage'];
}

/** Where a resumed turn goes on from, with the answers it waited for. */
export interface AgentStepResume {
  state: AgentTurnState;
  outputs?: Map<string, string>;
  decisions?: Map<string, ApprovalDecision>;
}

export interface AgentStepOptions {
  memories: MemoryStore;
  knowledge: KnowledgeRetriever | undefined;
  runs: RunStore;
  runService: Pick<RunService<ChatEvent, TurnReply>, 'pause'>;
  compactionOf(settings: AgentSettings | null, provider: LlmProvider | undefined): CompactionSettings;
  prices: PriceTable | undefined;
  maxIterations: number | undefined;
  toolSearchThreshold: number;
  describeError: DescribeError | undefined;
  /** Working memory: the turn's blocks in its prompt, and the tools that keep them. */
  blocks?: BlockStore | undefined;
  /**
   * Told when a run's turn has completed and is stored, with the run as its end left it (null: an
   * end retried after a lost reply found it ended already, and the run is to be read): it starts
   * the run's follow-ups.
   */
  startFollowUps?: (runId: string, ended: Run | null) => void;
  /** The `delegate` tool and child runs (src/delegation/); none when undefined. */
  delegation?: TurnDelegation;
  /** Where a paused run's images are kept (see `storeHistoryImages`); without it a history's data URLs are not kept. */
  attachments?: AttachmentStore | undefined;
}

/**
 * Runs (or resumes) the model and tools of a turn to its end, stored, or to its next pause, the
 * run's state kept for the answers.
 */
export async function runAgentStep(turn: AgentStep, resume: AgentStepResume | undefined, options: AgentStepOptions): Promise<TurnReply> {
  const { memories, knowledge, runs } = options;
  const { runId, conversationId, settings, provider, sources, toolCalls, stored, live } = turn;
  const emit = (event: ChatEvent) => live.emit(event);
  const toolSources = new Map<string, Source[]>();
  const permitted = permittedTools(settings ?? undefined);
  const compaction = options.compactionOf(settings, provider);
  const working = options.blocks
    ? await loadWorkingMemory(options.blocks, { agentId: turn.agentId, userId: turn.userId, runId, conversationId, templates: settings?.blocks })
    : undefined;
  const tools = [
    ...createChatTools({
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
    }),
    ...(working?.tools ?? []),
  ].filter((tool) => permitted.has(tool.name as never));
  // The turn's own model calls, counted as they come: a child's budget is what is left of the parent's.
  let spent: RunUsage = resume ? { ...resume.state.usage } : { ...ZERO_RUN_USAGE };
  const delegates = options.delegation?.forTurn({
    runId,
    conversationId,
    agentId: turn.agentId,
    userId: turn.userId,
    settings,
    lineage: turn.lineage,
    signal: live.signal,
    emit,
    stream: turn.stream,
    spent: () => spent,
    requestPause: () => void live.steering.requestPause(),
    waiting: turn.waitingChildren ?? [],
    delegatedUsage: turn.delegatedUsage,
  });
  if (delegates) tools.push(...delegates.tools.filter((tool) => permitted.has(tool.name as never)));
  if (delegates && resume) await delegates.resumeWaiting(resume, resume.state.newMessages, toolCalls);
  const toolNames = new Set(tools.map((t) => t.name));
  const approvals = settings ? approvalTools(settings) : undefined;
  const clientTools = toClientTools(turn.clientTools);
  const budget = settings?.budget;
  const maxIterations = settings?.maxIterations ?? options.maxIterations;
  let modelCalls = 0;
  let unchecked: Promise<void> | undefined;
  const result = await runAgentTurn({
    provider,
    systemPrompt: buildSystemPrompt({
      hasKnowledge: knowledge !== undefined,
      tools: toolNames,
      instructions: turn.request.instructions ?? settings?.instructions,
      ...(working && working.blocks.length > 0 ? { workingMemory: working.render(toolNames) } : {}),
      ...(turn.request.turnInstructions ? { turnInstructions: turn.request.turnInstructions } : {}),
    }),
    ...modelOptionsOf(settings, turn.request),
    messages: [...(stored?.history ?? []), { role: 'user', content: turn.userContent, ...(turn.images?.length ? { images: turn.images } : {}) }],
    tools,
    clientTools,
    ...(approvals ? { needsApproval: (call) => approvals.has(call.name) } : {}),
    toolSearchThreshold: options.toolSearchThreshold,
    ...toolLimitsOf(settings),
    // A delegation runs a whole turn of another agent: past the default tool timeout (30 s) unless the agent says.
    ...(delegates && settings?.tools?.timeoutMs === undefined ? { toolTimeoutMs: DELEGATING_TOOL_TIMEOUT_MS } : {}),
    ...(resume ? { resume } : {}),
    hooks: [
      // A cancel from another process reaches this one through the run's row, read before each
      // model call. A fresh run's first call does not wait for the read (the run was created moments
      // ago), but nothing the call asks for runs before it has come back.
      {
        beforeLlm: async () => {
          const checked = runs.statusOf(runId).then((status) => {
            if (status === 'cancelled') live.cancel(new RunCancelledError(runId));
          });
          if (modelCalls++ === 0 && !resume) {
            unchecked = checked;
            checked.catch(() => {});
          } else await checked;
        },
        afterLlm: async () => {
          const pending = unchecked;
          unchecked = undefined;
          await pending;
          live.signal.throwIfAborted();
        },
      },
      // Every tool the model may be sent counts against the window, the client's too.
      ...(stored ? [stored.compactionHook(estimateToolSpecTokens([...tools.map(toToolSpec), ...clientTools, TOOL_SEARCH_SPEC]))] : []),
      ...(turn.toolImages?.size ? [toolImagesHook(turn.toolImages)] : []),
    ],
    ...(maxIterations !== undefined ? { maxIterations } : {}),
    ...(budget ? { budget: { ...definedOnly({ maxTokens: budget.maxTokens, maxCostUsd: budget.maxUsd }), ...delegatedSpendOf(delegates) } } : {}),
    signal: live.signal,
    steering: live.steering,
    onEvent: countSpent(toolCallLog(toolCalls, toolSources, emit), (usage) => {
      spent = addRunUsage(spent, { ...usage, totalTokens: usage.promptTokens + usage.completionTokens });
    }),
    stream: turn.stream,
    ...(options.prices ? { prices: options.prices } : {}),
  });
  const delegated = delegates?.usage();
  const usage = delegated ? addRunUsage(result.usage, delegated.all.usage) : result.usage;
  const costUsd = delegated ? addCost(result.costUsd, delegated.all.costUsd) : (result.costUsd ?? null);

  if (result.stopReason === 'paused') {
    // Steering that came after the last model call waits, with the run, for its next one.
    const steers = live.steering.close();
    const reply = await options.runService.pause(runId, live, {
      conversationId,
      state: {
        request: turn.request,
        agent: settings,
        userContent: turn.userContent,
        sources: sources.all(),
        toolCalls,
        clientTools: turn.clientTools,
        nextTurn: turn.nextTurn,
        // By reference: a client's history carries its images as data URLs, never kept in the run's row.
        ...(turn.sentHistory ? { sentHistory: await storeHistoryImages(turn.sentHistory, options.attachments, turn.userId) } : {}),
        ...(turn.toolImages?.size ? { toolImages: toolImageRefs(turn.toolImages) } : {}),
        ...(steers.length > 0 ? { steers } : {}),
        ...(turn.lineage ? { lineage: turn.lineage } : {}),
        ...(delegates && delegates.waiting().length > 0 ? { waitingChildren: delegates.waiting() } : {}),
        ...(delegated ? { delegatedUsage: delegated.ended } : {}),
        turn: result.state,
      },
      pending: delegates ? delegates.pendingWith(result.pending) : result.pending!,
      toolCalls,
      usage,
      costUsd,
      ...(turn.threadKeyOf ? { threadKeyOf: turn.threadKeyOf } : {}),
    });
    emit({ type: 'paused', reply });
    return reply;
  }

  // Ended without pausing (a limit): nobody can answer a child still waiting.
  await delegates?.abandonWaiting();
  const citations = extractCitations(result.text, sources.all());
  const reply: ChatReply = {
    runId,
    status: 'completed',
    conversationId,
    answer: result.text,
    citations,
    toolCalls,
    usage,
    costUsd,
    stopReason: result.stopReason,
    mode: 'llm',
    ...(turn.request.includeReasoning && result.reasoning ? { reasoning: result.reasoning } : {}),
  };
  const threadKey = turn.threadKeyOf?.(reply);
  // The reasoning stays with the run (read back with `GET /v1/runs/:id?includeReasoning=true`), never with the turn.
  const end = {
    status: 'completed',
    usage,
    stopReason: result.stopReason,
    state: null,
    expiresAt: null,
    ...(result.reasoning ? { reasoning: result.reasoning } : {}),
  } as const;
  // Claimed before the turn is stored: a run cancelled meanwhile is not stored, as cancelling
  // promises, and a cancel from now on is refused. The run reads `running` until the turn is stored.
  if (!(await runs.claimEnd(runId, result.stopReason))) throw new RunCancelledError(runId);
  try {
    // The question is stored without this turn's sources: they were recalled for it, and a later
    // turn recalls its own (old source numbers would only collide with the new ones).
    await stored?.finish([
      {
        message: { role: 'user', content: turn.request.message, ...(turn.request.images?.length ? { images: turn.request.images } : {}) },
        metadata: turn.agentVersion === null ? { runId } : { runId, agentVersion: turn.agentVersion },
      },
      ...attachToolImages(result.newMessages, turn.toolImages ?? new Map()).map((message, i, all) => ({
        message,
        ...(i === all.length - 1 ? { metadata: { citations, stopReason: result.stopReason } } : {}),
      })),
    ]);
  } catch (error) {
    const body = options.describeError?.(error) ?? { code: 'turn_failed', message: 'The turn could not be stored' };
    await runs.endClaimed(runId, { status: 'failed', error: body, usage, state: null, expiresAt: null }).catch(() => {});
    throw error;
  }
  // Ended only now: whoever reads the run completed (a client polling it, its follow-ups) finds its turn stored.
  // Tried again after a failed write: the turn is stored, and until this lands the run reads running
  // and refuses a cancel (a run left so is failed by the sweep, as one whose process died).
  const ended = { ...end, ...(threadKey !== undefined ? { threadKey } : {}) };
  let endedRun: Run | null;
  for (let attempt = 1; ; attempt++) {
    try {
      endedRun = await runs.endClaimed(runId, ended);
      break;
    } catch (error) {
      if (attempt >= END_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
  emit({ type: 'done', reply });
  options.startFollowUps?.(runId, endedRun);
  return reply;
}

/**
 * Keeps the reply's list of tool calls as the loop reports them, and tells the listeners. Tools
 * run concurrently and finish in any order; the reply lists them in the order the model asked.
 */
function toolCallLog(toolCalls: ChatToolCall[], toolSources: ReadonlyMap<string, Source[]>, emit: (event: ChatEvent) => void): (event: AgentEvent) => void {
  const slots = new Map<string, number>(toolCalls.map((call, i) => [call.id, i]));
  return (event) => {
    if (event.type === 'delta') return emit({ type: 'delta', text: event.text });
    if (event.type === 'steer') return emit({ type: 'steer', message: event.message });
    if (event.type !== 'tool_start' && event.type !== 'tool_end') {
      const told = loopEventOf(event);
      return told ? emit(told) : undefined;
    }
    const { id, name } = event.call;
    const args = toolArgumentsOf(event.call.arguments);
    if (event.type === 'tool_start') {
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
}

/** The agent's per-tool limits and tool-call settings, as the loop takes them; unset ones keep the loop's defaults. */
function toolLimitsOf(settings: AgentSettings | null) {
  const tools = settings?.tools;
  const toolCalls = settings?.toolCalls;
  return definedOnly({
    toolTimeoutMs: tools?.timeoutMs,
    maxToolResultChars: tools?.maxResultChars,
    maxConsecutiveToolErrors: tools?.maxConsecutiveErrors,
    deferredTools: tools?.deferred,
    toolConcurrency: toolCalls?.parallel,
    textToolCalls: toolCalls?.textFallback === undefined ? undefined : toolCalls.textFallback === 'auto',
  });
}

/** Tells `onSpent` each model call's usage, then passes the event on. */
function countSpent(onEvent: (event: AgentEvent) => void, onSpent: (usage: Extract<AgentEvent, { type: 'turn_end' }>['usage']) => void) {
  return (event: AgentEvent) => {
    if (event.type === 'turn_end') onSpent(event.usage);
    onEvent(event);
  };
}

function preview(text: string): string {
  return text.length <= TOOL_RESULT_PREVIEW_CHARS ? text : `${text.slice(0, TOOL_RESULT_PREVIEW_CHARS)}…`;
}

/** The lead's budget covers what its children spend too: their usage counted at each step's budget check. */
function delegatedSpendOf(delegates: { usage(): { all: { usage: RunUsage; costUsd: number | null } } } | undefined) {
  if (!delegates) return {};
  return {
    extraSpend: () => {
      const { all } = delegates.usage();
      return { totalTokens: all.usage.totalTokens, costUsd: all.costUsd };
    },
  };
}
