import { createLiveRuns } from '../runs/live-runs.js';
import { type RunService, createRunService } from '../runs/run-service.js';
import { type AgentStepOptions, runAgentStep } from './agent-step.js';
import type { ChatEvent, TurnReply } from './chat-reply.js';
import type { ChatServiceOptions } from './chat-service-types.js';
import { SourceList } from './sources.js';
import { loadHistoryImages, loadToolImages, loadTurnImages, storeToolImages } from './turn-images.js';
import type { TurnStorage } from './turn-storage.js';

const RUN_RECONNECT_GRACE_MS_DEFAULT = 2_000;

export interface ChatRunsOptions
  extends Pick<ChatServiceOptions, 'tenantId' | 'runs' | 'liveRuns' | 'runTtlSeconds' | 'describeError' | 'agentRuntime' | 'attachments'> {
  storage: TurnStorage;
  /** What the model's steps run with, but the run service, which is made here. */
  stepOptions: Omit<AgentStepOptions, 'runService'>;
}

/**
 * The run service of the chat's turns: a paused run goes on from its stored state, with the
 * model and compaction its agent's settings had when it paused.
 */
export function createChatRunService(options: ChatRunsOptions): RunService<ChatEvent, TurnReply> {
  const { agentRuntime: runtime, storage, stepOptions } = options;
  const runService: RunService<ChatEvent, TurnReply> = createRunService<ChatEvent, TurnReply>({
    tenantId: options.tenantId,
    runs: options.runs,
    liveRuns: options.liveRuns ?? createLiveRuns<ChatEvent>({ graceMs: RUN_RECONNECT_GRACE_MS_DEFAULT }),
    runTtlSeconds: options.runTtlSeconds,
    describeError: options.describeError,
    errorEvent: (error) => ({ type: 'error', error }),
    async continueTurn(run, state, live, answers, listener) {
      const provider = runtime.llmFor(state.agent);
      if (!provider) throw new Error('No LLM is configured any more: the run cannot go on');
      const emit = (event: ChatEvent) => live.emit(event);
      // A client's history was kept with its images by reference: loaded again, the model is sent them as before the pause.
      const sentHistory = await loadHistoryImages(state.sentHistory, options.attachments);
      const stored = await storage.begin({
        conversationId: run.conversationId,
        agentId: run.agentId,
        userId: run.userId,
        settings: state.agent,
        provider,
        signal: live.signal,
        emit,
        sentHistory,
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
          images: await loadTurnImages(state.request.images, options.attachments),
          toolImages: new Map([
            ...(await loadToolImages(state.toolImages, options.attachments)),
            ...(answers.outputImages ? await storeToolImages(answers.outputImages, options.attachments, run.userId) : []),
          ]),
          sources: SourceList.from(state.sources),
          toolCalls: state.toolCalls,
          nextTurn: state.nextTurn,
          ...(sentHistory ? { sentHistory } : {}),
          ...(listener.threadKeyOf ? { threadKeyOf: listener.threadKeyOf } : {}),
          stored,
          live,
          stream: listener.stream ?? false,
          ...(state.lineage ? { lineage: state.lineage } : {}),
          ...(state.waitingChildren ? { waitingChildren: state.waitingChildren } : {}),
          ...(state.delegatedUsage ? { delegatedUsage: state.delegatedUsage } : {}),
        },
        { state: state.turn, ...answers },
        { ...stepOptions, runService },
      );
    },
  });
  return runService;
}
