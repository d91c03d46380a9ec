import type { AfterTurnHook } from '../../conversations/after-turn-hooks.js';
import type { MemoryExtractor } from './memory-extractor.js';
import type { PromptMessage } from './extraction-prompts.js';

/**
 * Extracts facts from each stored turn, in the background after the reply: the user's message
 * and the final answer (tool calls and results are the model's working, not the user's word), in
 * the turn's scope (its agent and user). No backfill (`missing`): an imported conversation of
 * hundreds of turns would send as many extraction requests at once, and an app that wants its
 * old conversations read has `POST /v1/memories/extract` for that.
 */
/** Told the facts drawn from a turn, whatever became of them as memories (repeats included): they become keys of the turn. */
export type TurnFactsSink = (tenantId: string, source: { conversationId: string; turn: number }, facts: string[], signal: AbortSignal) => Promise<unknown>;

export function createMemoryExtractionHook(extractorFor: (tenantId: string) => MemoryExtractor, factKeys?: TurnFactsSink): AfterTurnHook {
  return {
    name: 'memory-extraction',
    async run({ tenantId, agentId, userId, conversationId, turn, signal, memoryExtraction }) {
      // Off for this agent (or the deployment, when the agent does not say).
      if (memoryExtraction === false) return;
      const messages: PromptMessage[] = [];
      const question = turn.messages.find((m) => m.role === 'user');
      if (question?.content) messages.push({ role: 'user', content: question.content });
      const answer = turn.messages.findLast((m) => m.role === 'assistant' && m.content && m.toolCalls.length === 0);
      if (answer?.content) messages.push({ role: 'assistant', content: answer.content });
      const source = { conversationId, turn: turn.turn };
      const { decisions } = await extractorFor(tenantId).extract({ messages, scope: { agentId, userId }, source, signal });
      if (factKeys && decisions.length > 0)
        await factKeys(
          tenantId,
          source,
          decisions.map((d) => d.fact),
          signal,
        );
    },
  };
}
