import type { AfterTurnHook } from '../../conversations/after-turn-hooks.js';
import type { ExtractionJobPayload } from './extraction-job.js';
import type { PromptMessage } from './extraction-prompts.js';

/** Queues an extraction job for a tenant (`queueExtraction` on its job store). */
export type ExtractionQueue = (tenantId: string, payload: ExtractionJobPayload) => Promise<unknown>;

/**
 * Queues the extraction of each stored turn's facts as a durable job, after the reply: the user's
 * message and the final answer (tool calls and results are the model's working, not the user's
 * word), in the turn's scope (its agent and user). A job, so that a failing model is retried with
 * backoff, a failure stays listed (`GET /v1/jobs?kind=extraction&status=failed`), and a shutdown
 * loses nothing queued. No backfill (`missing`): an imported conversation of hundreds of turns
 * would queue as many model runs at once, and an app that wants its old conversations read has
 * `POST /v1/memories/extract` for that.
 */
export function createMemoryExtractionHook(queue: ExtractionQueue): AfterTurnHook {
  return {
    name: 'memory-extraction',
    async run({ tenantId, agentId, userId, conversationId, turn, memoryExtraction }) {
      // Off for this agent (or the deployment, when the agent does not say).
      if (memoryExtraction === false) return;
      // Facts are the user's: a turn without the user's words has none to draw.
      const question = turn.messages.find((m) => m.role === 'user');
      if (!question?.content?.trim()) return;
      const messages: PromptMessage[] = [{ role: 'user', content: question.content }];
      const answer = turn.messages.findLast((m) => m.role === 'assistant' && m.content && m.toolCalls.length === 0);
      if (answer?.content) messages.push({ role: 'assistant', content: answer.content });
      await queue(tenantId, { agentId, userId, conversationId, turn: turn.turn, at: new Date().toISOString(), messages });
    },
  };
}
