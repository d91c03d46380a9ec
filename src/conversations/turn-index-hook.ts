import type { TenantScoped } from '../tenancy/tenant-scoped.js';
import type { AfterTurnHook } from './after-turn-hooks.js';
import type { TurnIndex } from './turn-index.js';

/**
 * Adds each stored turn to the turns corpus after the reply (episodic recall), and gives the turn
 * before it its `after`. Turns left out (a crash before the hook ran, a conversation stored before
 * the corpus existed) are indexed when the conversation is next continued.
 */
export function createTurnIndexHook(turnIndexes: TenantScoped<TurnIndex>): AfterTurnHook {
  return {
    name: 'turn-index',
    async run({ tenantId, conversationId, turn, signal }) {
      await turnIndexes.forTenant(tenantId).indexConversation(conversationId, { turns: [turn.turn], signal });
    },
    missing({ loaded, turns }) {
      const done = new Set(loaded.indexedTurns);
      return turns.filter((t) => !done.has(t.turn));
    },
  };
}
