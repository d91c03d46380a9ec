import type { ApprovalDecision, PendingCalls } from '../llm/agent-loop.js';
import { AbortedError } from '../llm/llm-errors.js';
import type { ImagePart } from '../llm/messages.js';
import type { LiveRun, LiveRuns } from './live-runs.js';
import { answersByRun } from './run-answers-by-run.js';
import { type RunMessage, type RunMessageReceipt, createRunSteerer } from './run-steerer.js';
import {
  PAUSED_STATUSES,
  RunCancelledError,
  RunConflictError,
  RunNotFoundError,
  type Run,
  type RunState,
  type RunStore,
  type RunToolCall,
  type RunUsage,
  isEndClaimed,
} from './run-types.js';
import { type PausedReply, type RunView, callRunsOf, pausedReply, runView } from './run-view.js';

export const RUN_TTL_SECONDS_DEFAULT = 3600;

/** Who listens to a run's events: `seq` is the event's SSE id. */
export interface RunListener<E, R = unknown> {
  onEvent?: (event: E, seq: number) => void;
  /**
   * Fires when this listener has gone (a streaming client disconnected). The run goes on for a
   * grace period, in which a client may reconnect to its events; then it is aborted.
   */
  gone?: AbortSignal;
  /** Aborts the run at once (a JSON client that disconnected: nobody can reconnect to it). */
  signal?: AbortSignal;
  /** Stream the model's reply as it comes; the result is the same either way. */
  stream?: boolean;
  /**
   * For a client that keeps the conversation itself: the key of what it will hold once it has the
   * reply, stored with the run's end or pause (`RunUpdate.threadKey`); undefined stores none.
   */
  threadKeyOf?: (reply: R) => string | undefined;
}

/** Answers to a paused run: tool outputs (`requires_action`), approval decisions (`requires_approval`), or neither (`paused`: a resume). */
export interface ResumeAnswers {
  runId: string;
  /** `images`: what a client tool returned beside its text (sent to the model after the results). */
  /** `runId`: the run a call is for, where a lead's and its children's calls share an id. */
  toolOutputs?: Array<{ toolCallId: string; runId?: string; output: string; images?: ImagePart[] }>;
  decisions?: Array<{ toolCallId: string; runId?: string; approve: boolean; reason?: string }>;
}

/** The checked answers, by tool call id. */
export interface RunAnswers {
  outputs?: Map<string, string>;
  /** The images of the outputs that had any, by tool call id. */
  outputImages?: Map<string, ImagePart[]>;
  decisions?: Map<string, ApprovalDecision>;
}

/** An error body as the client is told it (`GET /v1/runs/:id`). */
export type DescribeError = (error: unknown) => { code: string; message: string };

export interface RunServiceOptions<E, R> {
  tenantId: string;
  runs: RunStore;
  /** Runs in progress in this process (cancel, reconnect); one per process, shared by tenants. */
  liveRuns: LiveRuns<E>;
  /** Goes on with a claimed run's turn, in the live run started for it, to its end or its next pause. */
  continueTurn(run: Run, state: RunState, live: LiveRun<E>, answers: RunAnswers, listener: RunListener<E, R>): Promise<R>;
  /** The event that tells a run's listeners it failed. */
  errorEvent(error: unknown): E;
  /** A paused run left unanswered this long expires. */
  runTtlSeconds?: number;
  /** What a failed run records of its error; default `turn_failed`, no details, so internals stay out. */
  describeError?: DescribeError;
}

/** What a run records when it pauses; the rest of its state the service adds. */
export interface PauseInput {
  conversationId: string;
  state: Omit<RunState, 'pending' | 'eventSeq'>;
  pending: PendingCalls;
  toolCalls: RunToolCall[];
  usage: RunUsage;
  costUsd: number | null;
  threadKeyOf?: (reply: PausedReply) => string | undefined;
}

/**
 * A run's life around its turns: started live in this process, paused with its state, resumed
 * once with checked answers, cancelled, failed or expired, and read back. The turn itself is the
 * caller's (`continueTurn`).
 */
export interface RunService<E, R> {
  /**
   * Checks the answers and claims the run (a 404, 409 or 400 is thrown here, before any reply
   * starts streaming), then returns what goes on with the turn.
   */
  beginResume(request: ResumeAnswers): Promise<(listener: RunListener<E, R>) => Promise<R>>;
  /** Continues a paused run with the answers it waits for. */
  resume(request: ResumeAnswers & RunListener<E, R>): Promise<R>;
  /** Steers a running turn of this process, or queues a follow-up on a run that has not ended (see `run-steerer.ts`). */
  sendMessage(runId: string, message: RunMessage): Promise<RunMessageReceipt>;
  /** Asks a running turn of this process to pause at its next step boundary; the run as it is now. */
  requestPause(runId: string): Promise<RunView>;
  /** The run; its reasoning too with `includeReasoning` (a paused run's so far, an ended run's kept at its end). */
  getRun(runId: string, options?: { includeReasoning?: boolean }): Promise<RunView>;
  /** Aborts a running run (its model call and tools) or drops a paused one. */
  cancelRun(runId: string): Promise<RunView>;
  /** A run in progress in this process, whose events can be listened to; undefined otherwise. */
  liveRun(runId: string): LiveRun<E> | undefined;
  /** Makes a run live in this process, `listener` attached; the caller ends it. */
  startLive(runId: string, listener: RunListener<E, R>, firstSeq: number): LiveRun<E>;
  /** Stores a paused run's state until it is answered or expires; throws when it was cancelled meanwhile. */
  pause(runId: string, live: LiveRun<E>, input: PauseInput): Promise<PausedReply>;
  /**
   * Records why a live run ended without a reply, and returns the error to report: the
   * cancellation when it was cancelled, whatever the aborted call threw.
   */
  fail(runId: string, live: LiveRun<E>, error: unknown): Promise<unknown>;
  /**
   * A conversation whose run waits for the client takes no other turn until that run is answered,
   * cancelled or expired: the waiting turn comes first in its history, and is stored first.
   */
  assertNoWaitingRun(conversationId: string | undefined): Promise<void>;
}

const WAITS_FOR = { requires_action: 'tool outputs', requires_approval: 'approval decisions', paused: 'POST /v1/runs/{runId}/resume' } as const;

/** A run claimed by two cancels at once is read again; past this many reads the caller is told to retry. */
const CANCEL_ATTEMPTS = 3;

export function createRunService<E, R>(options: RunServiceOptions<E, R>): RunService<E, R> {
  const { tenantId, runs, liveRuns } = options;
  const runTtlMs = (options.runTtlSeconds ?? RUN_TTL_SECONDS_DEFAULT) * 1000;

  async function beginResume(request: ResumeAnswers): Promise<(listener: RunListener<E, R>) => Promise<R>> {
    const { runId } = request;
    const loaded = await runs.load(runId);
    if (!loaded) throw new RunNotFoundError(runId);
    const { run, state } = loaded;
    const answering = request.toolOutputs !== undefined ? 'requires_action' : request.decisions !== undefined ? 'requires_approval' : 'paused';
    if (run.status === 'expired') throw new RunConflictError('run_expired', `Run ${runId} expired: it waited longer than its time to live`);
    await assertNotAwaitedByParent(run);
    if (run.status !== answering || !state) {
      const hint = PAUSED_STATUSES.includes(run.status) ? ` (it waits for ${WAITS_FOR[run.status as keyof typeof WAITS_FOR]})` : '';
      throw new RunConflictError('run_not_waiting', `Run ${runId} is ${run.status}${hint}`, { status: run.status });
    }
    const outputs = request.toolOutputs ? answersByRun('toolOutputs', runId, state, request.toolOutputs, (a) => a.output) : undefined;
    const decisions = request.decisions
      ? answersByRun('decisions', runId, state, request.decisions, (d): ApprovalDecision => ({ approve: d.approve, reason: d.reason }))
      : undefined;
    // Claimed with a compare-and-set: of two resumes of one pause, one wins and the other is a 409.
    if (!(await runs.update(runId, { status: 'running', expiresAt: null }, [answering]))) {
      throw new RunConflictError('run_not_waiting', `Run ${runId} is being resumed already`);
    }
    const imaged = (request.toolOutputs ?? []).flatMap((o) => (o.images?.length ? [[o.toolCallId, o.images] as const] : []));
    const outputImages = imaged.length > 0 ? new Map<string, ImagePart[]>(imaged) : undefined;
    return (listener) =>
      continueRun(run, state, listener, { ...(outputs ? { outputs } : {}), ...(outputImages ? { outputImages } : {}), ...(decisions ? { decisions } : {}) });
  }

  /**
   * A child answered directly would go on without its parent, whose own resume then finds it ended:
   * while the parent waits on it, it is answered through the parent. The parent's resume claims the
   * parent (status `running`) before it resumes the child, so that path passes here.
   */
  async function assertNotAwaitedByParent(run: Run): Promise<void> {
    if (!run.parentRunId) return;
    const parent = await runs.load(run.parentRunId);
    if (!parent || !PAUSED_STATUSES.includes(parent.run.status)) return;
    if (!parent.state?.waitingChildren?.some((child) => child.runId === run.id)) return;
    throw new RunConflictError(
      'answer_through_parent',
      `Run ${run.id} is a delegated run its parent run ${run.parentRunId} waits on: answer it through POST /v1/runs/${run.parentRunId}/approvals or /tool-outputs`,
      { parentRunId: run.parentRunId },
    );
  }

  async function continueRun(run: Run, state: RunState, listener: RunListener<E, R>, answers: RunAnswers): Promise<R> {
    const live = startLive(run.id, listener, state.eventSeq, state.steers);
    try {
      return await options.continueTurn(run, state, live, answers, listener);
    } catch (error) {
      const reason = await fail(run.id, live, error);
      live.emit(options.errorEvent(reason));
      throw reason;
    } finally {
      live.end();
    }
  }

  async function getRun(runId: string, options: { includeReasoning?: boolean } = {}): Promise<RunView> {
    const loaded = await runs.load(runId);
    if (!loaded) throw new RunNotFoundError(runId);
    const reasoning = options.includeReasoning ? (loaded.reasoning ?? loaded.state?.turn.reasoning) : undefined;
    return runView(loaded.run, loaded.state, await runs.children(runId), reasoning);
  }

  async function cancelRun(runId: string): Promise<RunView> {
    const body = { code: 'run_cancelled', message: `Run ${runId} was cancelled` };
    // From the status just read, so that a resume or an end in between is seen (and read again).
    for (let attempt = 0; attempt < CANCEL_ATTEMPTS; attempt++) {
      const run = await runs.get(runId);
      if (!run) throw new RunNotFoundError(runId);
      if (run.status !== 'running' && !PAUSED_STATUSES.includes(run.status)) {
        throw new RunConflictError('run_not_waiting', `Run ${runId} is ${run.status}: only a running or waiting run can be cancelled`, { status: run.status });
      }
      // Its end is claimed (see `RunStore.claimEnd`): refused as it is once the run has ended.
      if (isEndClaimed(run)) {
        const message = `Run ${runId} has made its last model call, and its turn is being stored: it can no longer be cancelled`;
        throw new RunConflictError('run_not_waiting', message, { status: run.status });
      }
      if (await runs.update(runId, { status: 'cancelled', error: body, state: null, expiresAt: null }, [run.status])) {
        // Aborted here when it runs in this process; elsewhere, its next model call sees the row.
        if (run.status === 'running') liveRuns.get(tenantId, runId)?.cancel(new RunCancelledError(runId));
        await cancelChildren(runId);
        return getRun(runId);
      }
    }
    throw new RunConflictError('run_not_waiting', `Run ${runId} kept changing while it was being cancelled; try again`);
  }

  /**
   * A cancelled run's children go with it: a running one's abort reaches the children it runs in
   * this process, but a paused one's children wait in rows of their own, and another process's in theirs.
   */
  async function cancelChildren(runId: string): Promise<void> {
    const open = (await runs.children(runId)).filter((child) => child.status === 'running' || PAUSED_STATUSES.includes(child.status));
    for (const child of open) await cancelRun(child.id).catch(() => {});
  }

  function startLive(runId: string, listener: RunListener<E, R>, firstSeq: number, steers?: readonly string[]): LiveRun<E> {
    // Only a streaming client's run is abandoned when it leaves: a JSON client's leaving aborts it through `signal`.
    const live = liveRuns.start(tenantId, runId, { firstSeq, abandonable: listener.gone !== undefined, ...(steers ? { steers } : {}) });
    if (listener.onEvent) live.listen({ onEvent: (seq, event) => listener.onEvent?.(event, seq), gone: listener.gone });
    if (listener.signal) {
      const { signal } = listener;
      if (signal.aborted) live.cancel(signal.reason);
      else signal.addEventListener('abort', () => live.cancel(signal.reason), { once: true });
    }
    return live;
  }

  async function pause(runId: string, live: LiveRun<E>, input: PauseInput): Promise<PausedReply> {
    const { pending, usage, costUsd, toolCalls } = input;
    // Nothing pending: paused on request (`requestPause`), resumed by `POST /v1/runs/:id/resume`.
    const status = pending.approvals.length > 0 ? 'requires_approval' : pending.clientCalls.length > 0 ? 'requires_action' : 'paused';
    const expiresAt = new Date(Date.now() + runTtlMs);
    // The pause event's own number: a resumed stream goes on after it.
    const state: RunState = { ...input.state, pending, eventSeq: live.seq + 1 };
    const reply = pausedReply({
      runId,
      conversationId: input.conversationId,
      status,
      pending,
      toolCalls,
      usage,
      costUsd,
      expiresAt,
      callRuns: callRunsOf(state),
    });
    const threadKey = input.threadKeyOf?.(reply);
    // Not running any more: cancelled meanwhile (from another process, or between two model calls).
    if (!(await runs.update(runId, { status, usage, state, expiresAt, ...(threadKey !== undefined ? { threadKey } : {}) }, ['running']))) {
      throw new RunCancelledError(runId);
    }
    return reply;
  }

  /** A cancelled run's error is the cancellation, whatever the aborted call threw. */
  const reasonFor = (live: LiveRun<E>, error: unknown): unknown => (live.signal.reason instanceof RunCancelledError ? live.signal.reason : error);

  async function fail(runId: string, live: LiveRun<E>, error: unknown): Promise<unknown> {
    const aborted = live.signal.aborted || error instanceof AbortedError;
    const reason = reasonFor(live, error);
    const body =
      reason instanceof RunCancelledError
        ? { code: 'run_cancelled', message: reason.message }
        : aborted
          ? { code: 'client_closed_request', message: 'The client went away, and the turn was aborted' }
          : (options.describeError?.(reason) ?? { code: 'turn_failed', message: 'The turn failed' });
    await runs.update(runId, { status: aborted ? 'cancelled' : 'failed', error: body, state: null, expiresAt: null }, ['running']).catch(() => {});
    return reason;
  }

  async function assertNoWaitingRun(conversationId: string | undefined): Promise<void> {
    if (conversationId === undefined) return;
    const waiting = await runs.waitingIn(conversationId);
    if (waiting) {
      throw new RunConflictError('run_waiting', `Conversation ${conversationId} has a run waiting for the client (${waiting}): answer or cancel it first`, {
        runId: waiting,
      });
    }
  }

  const steerer = createRunSteerer({ runs, liveRun: (runId) => liveRuns.get(tenantId, runId) });

  return {
    beginResume,
    resume: async (request) => (await beginResume(request))(request),
    sendMessage: steerer.sendMessage,
    requestPause: async (runId) => {
      await steerer.requestPause(runId);
      return getRun(runId);
    },
    getRun,
    cancelRun,
    liveRun: (runId) => liveRuns.get(tenantId, runId),
    startLive,
    pause,
    fail,
    assertNoWaitingRun,
  };
}
