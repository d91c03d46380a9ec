import { describe, expect, it } from 'vitest';
import type { WorkflowDefinition } from '../../src/workflows/workflow-definition.js';
import { resumeWorkflow, startProgress } from '../../src/workflows/workflow-runner.js';

/** A workflow step that paused and then failed on its resume: what it spent before the pause is the run's too. */

describe('a workflow step failing after its pause', () => {
  it("lost the step's usage from before its pause", async () => {
    const definition = { name: 'w', entry: 'a', nodes: [{ id: 'a', agentId: 'x', prompt: 'p' }] } as WorkflowDefinition;
    const progress = startProgress(definition, 'input');
    const run = { runId: 'wf', conversationId: 'wf-conversation', userId: null, signal: new AbortController().signal, emit: () => {} };
    const turns = {
      chat: async () => {
        throw new Error('unused');
      },
      resume: async () => {
        throw new Error('the model went away');
      },
      cancelRun: async () => {},
    };
    const usage = { promptTokens: 30, completionTokens: 12, totalTokens: 42 };
    const outcome = await resumeWorkflow(
      run,
      progress,
      { node: 'a', runId: 'step', usage, costUsd: 0.25 },
      { toolOutputs: [] },
      { turns, conversations: undefined },
    );
    expect(outcome).toMatchObject({ status: 'failed', stopReason: 'step_failed', error: { message: expect.stringMatching(/the model went away/) } });
    expect(outcome.progress).toMatchObject({ usage, costUsd: 0.25 });
  });
});
