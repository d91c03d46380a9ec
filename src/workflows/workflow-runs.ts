import { randomUUID } from 'node:crypto';
import { type ChildConversations, createChildConversations } from '../delegation/child-conversations.js';
import type { Db } from '../db/database.js';
import type { LiveRun, LiveRuns } from '../runs/live-runs.js';
import { answersFor } from '../runs/run-answers.js';
import { RunCancelledError, RunConflictError, RunNotFoundError, type RunStore } from '../runs/run-types.js';
import type { Workflow } from './workflow-definition.js';
import { type PausedWorkflow, type WorkflowRunReply, pausedReplyFields, pausedState, replyOf, workflowAgentId } from './workflow-run-reply.js';
import { type StepTurns, type WorkflowEvent, type WorkflowOutcome, resumeWorkflow, runWorkflow, startProgress } from './workflow-runner.js';

export { isWorkflowState, type WorkflowRunReply } from './workflow-run-reply.js';

const RUN_TTL_SECONDS_DEFAULT = 3600;

export interface WorkflowRunsDeps<E> {
  tenantId: string;
  runs: RunStore;
  liveRuns: LiveRuns<E>;
  turns: StepTurns;
  conversations: ChildConversations | undefined;
  /** The workflow's events in the live run's event type. */
  eventOf(event: WorkflowEvent): E;
  runTtlSeconds?: number;
}

export interface WorkflowListener<E> {
  signal?: AbortSignal;
  onEvent?: (event: E, seq: number) => void;
}

/**
 * Starts and resumes workflow runs: recorded before they run (so they can be read and cancelled
 * meanwhile), live in this process (events, a cancel), their end or pause recorded with their steps' usage.
 */
export function createWorkflowRuns<E>(deps: WorkflowRunsDeps<E>) {
  const { runs } = deps;
  const ttlMs = (deps.runTtlSeconds ?? RUN_TTL_SECONDS_DEFAULT) * 1000;

  function startLive(runId: string, listener: WorkflowListener<E>): LiveRun<E> {
    const live = deps.liveRuns.start(deps.tenantId, runId);
    if (listener.onEvent) live.listen({ onEvent: (seq, event) => listener.onEvent?.(event, seq) });
    const { signal } = listener;
    if (signal) signal.addEventListener('abort', () => live.cancel(signal.reason), { once: true });
    return live;
  }

  /** Runs `go` in the run's live run, then records how it ended or paused. */
  async function drive(
    runId: string,
    conversationId: string | null,
    base: Pick<WorkflowRunReply, 'workflowId' | 'version'>,
    listener: WorkflowListener<E>,
    go: (input: Parameters<typeof runWorkflow>[0]) => Promise<WorkflowOutcome>,
  ): Promise<WorkflowRunReply> {
    const live = startLive(runId, listener);
    const run = await runs.get(runId);
    const input = {
      runId,
      conversationId: conversationId ?? randomUUID(),
      userId: run?.userId ?? null,
      signal: live.signal,
      emit: (event: WorkflowEvent) => live.emit(deps.eventOf(event)),
    };
    try {
      return await record(runId, base, await go(input));
    } catch (error) {
      const cancelled = live.signal.reason instanceof RunCancelledError || live.signal.aborted;
      const body = cancelled
        ? { code: 'run_cancelled', message: `Run ${runId} was cancelled` }
        : { code: 'workflow_failed', message: 'The workflow run failed' };
      await runs.update(runId, { status: cancelled ? 'cancelled' : 'failed', error: body, state: null, expiresAt: null }, ['running']).catch(() => {});
      if (!cancelled) throw error;
      const usage = (await runs.get(runId))?.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
      return { runId, ...base, status: 'cancelled', output: null, path: [], steps: [], stopReason: 'cancelled', usage, costUsd: null, error: body };
    } finally {
      live.end();
    }
  }

  async function record(runId: string, base: Pick<WorkflowRunReply, 'workflowId' | 'version'>, outcome: WorkflowOutcome): Promise<WorkflowRunReply> {
    const reply = replyOf(runId, base, outcome);
    let written: boolean;
    if (outcome.status === 'paused') {
      const expiresAt = new Date(Date.now() + ttlMs);
      const state = pausedState(base, outcome);
      Object.assign(reply, pausedReplyFields(outcome), { expiresAt: expiresAt.toISOString() });
      written = await runs.update(runId, { status: reply.status as 'requires_approval' | 'requires_action', usage: reply.usage, state, expiresAt }, [
        'running',
      ]);
    } else {
      const end = {
        status: outcome.status,
        usage: outcome.progress.usage,
        stopReason: outcome.stopReason,
        state: null,
        expiresAt: null,
        ...(outcome.error ? { error: outcome.error } : {}),
      };
      written = await runs.update(runId, end, ['running']);
    }
    if (!written) return { ...reply, status: 'cancelled', stopReason: 'cancelled', error: { code: 'run_cancelled', message: `Run ${runId} was cancelled` } };
    return reply;
  }

  async function start(
    workflow: Workflow,
    request: { input: string | Record<string, unknown>; userId?: string } & WorkflowListener<E>,
  ): Promise<WorkflowRunReply> {
    const runId = randomUUID();
    const conversationId = randomUUID();
    await runs.create({
      id: runId,
      agentId: workflowAgentId(workflow.id),
      userId: request.userId ?? null,
      conversationId,
      agentVersion: null,
      status: 'running',
    });
    const progress = startProgress(workflow, request.input);
    return drive(runId, conversationId, { workflowId: workflow.id, version: workflow.version }, request, (input) => runWorkflow(input, progress, deps));
  }

  /** Answers a paused workflow run: its waiting step is resumed with them, then the graph goes on. Checked as a chat run's answers are. */
  async function resume(
    answers: {
      runId: string;
      decisions?: Array<{ toolCallId: string; approve: boolean; reason?: string }>;
      toolOutputs?: Array<{ toolCallId: string; output: string }>;
    },
    listener: WorkflowListener<E> = {},
  ): Promise<WorkflowRunReply> {
    const { runId } = answers;
    const loaded = await runs.load(runId);
    if (!loaded) throw new RunNotFoundError(runId);
    const { run, state } = loaded;
    const answering = answers.toolOutputs !== undefined ? 'requires_action' : 'requires_approval';
    if (run.status === 'expired') throw new RunConflictError('run_expired', `Run ${runId} expired: it waited longer than its time to live`);
    const paused = (state as unknown as { workflow?: PausedWorkflow } | null)?.workflow;
    if (run.status !== answering || !state || !paused) throw new RunConflictError('run_not_waiting', `Run ${runId} is ${run.status}`, { status: run.status });
    if (answers.decisions) answersFor('decisions', state.pending.approvals, answers.decisions, (d) => d);
    if (answers.toolOutputs) answersFor('toolOutputs', state.pending.clientCalls, answers.toolOutputs, (o) => o);
    if (!(await runs.update(runId, { status: 'running', expiresAt: null }, [answering]))) {
      throw new RunConflictError('run_not_waiting', `Run ${runId} is being resumed already`);
    }
    const stepAnswers = answers.decisions ? { decisions: answers.decisions } : { toolOutputs: answers.toolOutputs ?? [] };
    return drive(runId, run.conversationId, { workflowId: paused.workflowId, version: paused.version }, listener, (input) =>
      resumeWorkflow(input, paused.progress, paused.waitingStep, stepAnswers, deps),
    );
  }

  return { start, resume };
}

/** The workflow runs of one tenant over the chat of that tenant (the chat service is a `StepTurns`). */
export function workflowRunsOver<E>(parts: {
  tenantId: string;
  db: Db;
  runs: RunStore;
  liveRuns: LiveRuns<E>;
  chat: StepTurns;
  runTtlSeconds?: number;
  eventOf(event: WorkflowEvent): E;
}) {
  const { chat } = parts;
  return createWorkflowRuns<E>({
    tenantId: parts.tenantId,
    runs: parts.runs,
    liveRuns: parts.liveRuns,
    turns: { chat: (request) => chat.chat(request), resume: (request) => chat.resume(request), cancelRun: (runId) => chat.cancelRun(runId) },
    conversations: createChildConversations(parts.db, parts.tenantId),
    eventOf: parts.eventOf,
    ...(parts.runTtlSeconds !== undefined ? { runTtlSeconds: parts.runTtlSeconds } : {}),
  });
}
