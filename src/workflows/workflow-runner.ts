import { randomUUID } from 'node:crypto';
import type { ChildConversations } from '../delegation/child-conversations.js';
import type { ChildReply } from '../delegation/delegation-types.js';
import type { RunLineage, RunUsage } from '../runs/run-types.js';
import { addCost, addRunUsage } from '../runs/run-usage.js';
import type { PausedReply } from '../runs/run-view.js';
import { WORKFLOW_LIMITS, type WorkflowDefinition } from './workflow-definition.js';
import { nextNode } from './workflow-edges.js';
import { mergeState, renderTemplate } from './workflow-template.js';

/** The chat as a workflow's steps use it (the chat service, handed in by the edge). */
export interface StepTurns {
  chat(request: {
    message: string;
    agentId: string;
    userId?: string;
    conversationId: string;
    runId: string;
    lineage: RunLineage;
    signal?: AbortSignal;
  }): Promise<ChildReply>;
  resume(request: {
    runId: string;
    decisions?: Array<{ toolCallId: string; approve: boolean; reason?: string }>;
    toolOutputs?: Array<{ toolCallId: string; output: string }>;
    signal?: AbortSignal;
  }): Promise<ChildReply>;
  cancelRun(runId: string): Promise<unknown>;
}

/** The events a workflow run sends as its steps start and end (a step is a child run, as a delegation is). */
export type WorkflowEvent = { type: 'delegate_start'; role: string; agentId: string; runId: string } | { type: 'delegate_end'; runId: string; status: string };

export interface WorkflowStep {
  node: string;
  runId: string;
  output: string;
}

/** Where a run stands: plain JSON, kept with a paused run. The definition is the version it started with. */
export interface WorkflowProgress {
  definition: WorkflowDefinition;
  input: string;
  state: Record<string, unknown>;
  steps: WorkflowStep[];
  usage: RunUsage;
  costUsd: number | null;
  /** The node to run next (or, paused, the node whose step waits); null once no edge was taken. */
  current: string | null;
}

export interface WorkflowOutcome {
  status: 'completed' | 'failed' | 'paused';
  /** `completed`, `max_steps`, `step_failed` (a step's run failed), or `paused` (a step waits for the client). */
  stopReason: 'completed' | 'max_steps' | 'step_failed' | 'paused';
  progress: WorkflowProgress;
  /** A paused run: the step that waits, and its pause. */
  waiting?: { node: string; agentId: string; reply: PausedReply };
  error?: { code: string; message: string };
}

export interface WorkflowRunInput {
  runId: string;
  /** The run's own conversation id: each step's conversation is linked to it. */
  conversationId: string;
  userId: string | null;
  signal: AbortSignal;
  emit(event: WorkflowEvent): void;
}

export interface WorkflowDeps {
  turns: StepTurns;
  conversations: ChildConversations | undefined;
}

/** A run's progress before its first step. */
export function startProgress(definition: WorkflowDefinition, input: string | Record<string, unknown>): WorkflowProgress {
  return {
    definition,
    input: typeof input === 'string' ? input : JSON.stringify(input),
    state: typeof input === 'string' ? {} : { ...input },
    steps: [],
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    costUsd: null,
    current: definition.entry,
  };
}

/**
 * Runs a workflow on from `progress`: each node a child run of the workflow's run, its prompt filled
 * from the input, the outputs so far and the state; then the first outgoing edge whose condition
 * holds, until no edge is taken (completed), `maxSteps` is reached (failed, `max_steps`), or a
 * step waits for the client (paused, resumed by `resumeWorkflow`).
 */
export async function runWorkflow(run: WorkflowRunInput, progress: WorkflowProgress, deps: WorkflowDeps): Promise<WorkflowOutcome> {
  const { definition } = progress;
  const maxSteps = definition.maxSteps ?? WORKFLOW_LIMITS.maxSteps.default;
  const nodes = new Map(definition.nodes.map((node) => [node.id, node]));
  while (progress.current !== null) {
    run.signal.throwIfAborted();
    if (progress.steps.length >= maxSteps) {
      return {
        status: 'failed',
        stopReason: 'max_steps',
        progress,
        error: { code: 'max_steps', message: `The workflow took ${maxSteps} steps without ending` },
      };
    }
    const node = nodes.get(progress.current)!;
    const stepRunId = randomUUID();
    const conversationId = randomUUID();
    const outputs = new Map(progress.steps.map((step) => [step.node, step.output]));
    const message = renderTemplate(node.prompt, { input: progress.input, outputs, state: progress.state });
    await deps.conversations?.open({ id: conversationId, agentId: node.agentId, userId: run.userId, parentConversationId: run.conversationId, task: message });
    run.emit({ type: 'delegate_start', role: node.id, agentId: node.agentId, runId: stepRunId });
    const ended = await afterStep(run, progress, node, stepRunId, () =>
      deps.turns.chat({
        message,
        agentId: node.agentId,
        ...(run.userId !== null ? { userId: run.userId } : {}),
        conversationId,
        runId: stepRunId,
        lineage: { parentRunId: run.runId, role: node.id, stack: [node.agentId] },
        signal: run.signal,
      }),
    );
    if (ended) return ended;
  }
  return { status: 'completed', stopReason: 'completed', progress };
}

/** Goes on with a paused run: the waiting step resumed with the answers meant for it, then the graph as before. */
export async function resumeWorkflow(
  run: WorkflowRunInput,
  progress: WorkflowProgress,
  /** `usage`/`costUsd`: what the step had spent by its pause, counted should its resume fail without a reply. */
  waiting: { node: string; runId: string; usage?: RunUsage; costUsd?: number | null },
  answers: Omit<Parameters<StepTurns['resume']>[0], 'runId' | 'signal'>,
  deps: WorkflowDeps,
): Promise<WorkflowOutcome> {
  const node = progress.definition.nodes.find((n) => n.id === waiting.node)!;
  const before = waiting.usage ? { usage: waiting.usage, costUsd: waiting.costUsd ?? null } : undefined;
  const ended = await afterStep(run, progress, node, waiting.runId, () => deps.turns.resume({ runId: waiting.runId, ...answers, signal: run.signal }), before);
  return ended ?? runWorkflow(run, progress, deps);
}

/** A step's reply folded into the progress; an outcome when the run stops here (a failure, a pause). */
async function afterStep(
  run: WorkflowRunInput,
  progress: WorkflowProgress,
  node: { id: string; agentId: string },
  stepRunId: string,
  step: () => Promise<ChildReply>,
  before?: { usage: RunUsage; costUsd: number | null },
): Promise<WorkflowOutcome | undefined> {
  let reply: ChildReply;
  try {
    reply = await step();
  } catch (error) {
    run.emit({ type: 'delegate_end', runId: stepRunId, status: run.signal.aborted ? 'cancelled' : 'failed' });
    if (run.signal.aborted) throw error;
    // No reply tells what the step spent: what it had by its pause still counts.
    if (before) {
      progress.usage = addRunUsage(progress.usage, before.usage);
      progress.costUsd = addCost(progress.costUsd, before.costUsd);
    }
    const message = `Step ${node.id} failed: ${error instanceof Error ? error.message : String(error)}`;
    return { status: 'failed', stopReason: 'step_failed', progress, error: { code: 'step_failed', message } };
  }
  run.emit({ type: 'delegate_end', runId: stepRunId, status: reply.status });
  // A waiting step's usage is counted once it ends (its reply then has all of it); the pause reports it beside.
  if (reply.status === 'requires_approval' || reply.status === 'requires_action') {
    progress.current = node.id;
    return { status: 'paused', stopReason: 'paused', progress, waiting: { node: node.id, agentId: node.agentId, reply } };
  }
  progress.usage = addRunUsage(progress.usage, reply.usage);
  progress.costUsd = addCost(progress.costUsd, reply.costUsd);
  // Paused on request (`POST /v1/runs/{step}/pause`): nobody resumes it through the workflow, so it fails the run.
  if (reply.status !== 'completed') {
    return { status: 'failed', stopReason: 'step_failed', progress, error: { code: 'step_failed', message: `Step ${node.id} was paused on request` } };
  }
  progress.steps.push({ node: node.id, runId: stepRunId, output: reply.answer });
  progress.state = mergeState(progress.state, reply.answer);
  progress.current = nextNode(progress.definition, node.id, reply.answer) ?? null;
  return undefined;
}
