import { randomUUID } from 'node:crypto';
import { settingsOf } from '../agents/agent-config.js';
import type { LiveRun } from '../runs/live-runs.js';
import { startFollowUps } from '../runs/follow-ups.js';
import type { Run, RunState } from '../runs/run-types.js';
import { definedOnly } from '../util/defined-only.js';
import { runAgentStep } from './agent-step.js';
import type { ChatEvent, TurnReply } from './chat-reply.js';
import { createChatRunService } from './chat-runs.js';
import { createChatConversations } from './chat-conversations.js';
import type { ChatRequest, ChatService, ChatServiceOptions } from './chat-service-types.js';
import { recallSources, renderSourcesBlock } from './context-block.js';
import { runExtractiveTurn } from './extractive-turn.js';
import { embedQuestion } from './extractive/extractive-reply.js';
import { planRecall } from './recall-plan.js';
import { SourceList } from './sources.js';
import { imageRefs, storeTurnImages } from './turn-images.js';
import { createTurnStorage } from './turn-storage.js';
import { modelRequestOf } from './turn-model-options.js';

export type { ChatEvent, ChatReply, ChatToolCall, PausedReply, RunView, TurnReply } from './chat-reply.js';
export type { ResumeAnswers } from '../runs/run-service.js';
export type { AgentRuntime, ChatListener, ChatRequest, ChatRuns, ChatService, ChatServiceOptions, RecordedTurn } from './chat-service-types.js';

const TOOL_SEARCH_THRESHOLD_DEFAULT = 20;

/** The chat's turns: recall, then an extractive reply or the agent loop, each turn of a model a run. */
export function createChatService(options: ChatServiceOptions): ChatService {
  const { memories, knowledge, conversations, turns, agents, runs, agentRuntime: runtime } = options;
  const storage = createTurnStorage(options);
  const { compactionOf } = storage;
  const stepOptions = {
    memories,
    knowledge,
    runs,
    compactionOf,
    prices: options.prices,
    maxIterations: options.maxIterations,
    toolSearchThreshold: options.toolSearchThreshold ?? TOOL_SEARCH_THRESHOLD_DEFAULT,
    describeError: options.describeError,
    blocks: options.blocks,
    startFollowUps: (runId: string, ended: Run | null) => void runFollowUps(runId, ended),
    attachments: options.attachments,
    ...(options.delegation ? { delegation: options.delegation } : {}),
  };
  const runService = createChatRunService({ ...options, storage, stepOptions });

  /** A completed run's follow-ups: the first as the conversation's next turn, nobody waiting for its reply. */
  async function runFollowUps(runId: string, ended: Run | null): Promise<void> {
    // An end whose first write landed but whose reply was lost is retried, and finds the run ended: read it.
    const run = ended ?? (await runs.get(runId).catch(() => null));
    if (!run) return;
    await startFollowUps(
      run,
      (run, followUp, rest) =>
        chat({
          message: followUp.message,
          agentId: run.agentId,
          ...(run.userId !== null ? { userId: run.userId } : {}),
          conversationId: run.conversationId,
          runId: followUp.runId,
          followUps: rest,
        }),
      // A follow-up that failed is recorded in its run (`GET /v1/runs/:id`); there is no one else to tell.
    ).catch(() => {});
  }

  async function chat(request: ChatRequest): Promise<TurnReply> {
    // A new conversation when no id is given; a given id continues that conversation, or starts
    // one under that id if it does not exist yet.
    const conversationId = request.conversationId ?? randomUUID();
    const runId = request.runId ?? randomUUID();
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
        await runs.create({
          id: runId,
          agentId,
          userId,
          conversationId,
          agentVersion,
          status: 'running',
          ...(request.followUps ? { followUps: request.followUps } : {}),
          ...(request.lineage ? { parentRunId: request.lineage.parentRunId, role: request.lineage.role } : {}),
        });
        live = runService.startLive(runId, request, 0);
      }
      const signal = live?.signal ?? request.signal;
      const stored = await storage.begin({
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
      // Stored before the model runs (the turn and a paused run name them by id); the text alone is recalled with.
      const images = await storeTurnImages(request.images, conversations ? options.attachments : undefined, userId);
      const { filters, limits } = planRecall(request, settings?.recall, provider && live ? compactionOf(settings, provider) : undefined);
      const sources = new SourceList();
      const extractive = !provider || !live;
      // Without a model the answer weighs sentences by their cosine to the question.
      const questionVector = extractive ? embedQuestion(options.embedder, message, signal) : undefined;
      const recalled = await recallSources(sources, {
        query: message,
        agentId,
        userId,
        ...limits,
        // The extractive answer reads each document hit's whole passage; a model gets the chunks.
        passages: extractive,
        memories,
        knowledge,
        // Episodic recall needs stored conversations: other ones, this one's turns being its history.
        turns: conversations && turns ? { search: turns, ...(request.conversationId !== undefined ? { conversationId } : {}) } : undefined,
        signal,
        ...definedOnly(filters),
      });

      // Without a model the reply emits the sources, numbered as its answer cites them.
      if (!provider || !live) {
        const turn = {
          message,
          images,
          runId,
          conversationId,
          agentId,
          userId,
          agentVersion,
          recalled,
          questionVector,
          stored,
          threadKeyOf: request.threadKeyOf,
          signal,
        };
        return await runExtractiveTurn(turn, emit, { runs, embedder: options.embedder });
      }
      emit({ type: 'retrieval', runId, conversationId, sources: recalled });
      return await runAgentStep(
        {
          runId,
          conversationId,
          agentId,
          userId,
          settings,
          agentVersion,
          provider,
          images,
          request: {
            message,
            ...(images.length > 0 ? { images: imageRefs(images) } : {}),
            ...definedOnly({ instructions: request.instructions, topK: request.topK, candidateK: request.candidateK, ...filters }),
            ...modelRequestOf(request),
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
          ...(request.lineage ? { lineage: request.lineage } : {}),
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

  return {
    chat,
    resume: runService.resume,
    beginResume: runService.beginResume,
    getRun: runService.getRun,
    cancelRun: runService.cancelRun,
    liveRun: runService.liveRun,
    sendMessage: runService.sendMessage,
    requestPause: runService.requestPause,
    ...createChatConversations({ ...options, storage, runService }),
  };
}
