import type { ChildRunDeps } from './child-run.js';
import type { ParentTurn } from './delegation-types.js';
import { createTurnDelegates } from './turn-delegates.js';

/**
 * Delegation for one tenant's chat: each turn of an agent with a cast gets `delegate`, whose calls
 * run the roles' agents as child runs. Handed to the chat through its options (`delegation`), the
 * chat service handed back in `deps.turns`, so that neither folder imports the other.
 */
export function createDelegation<E>(deps: ChildRunDeps<E>) {
  return {
    forTurn: (turn: ParentTurn<E>) => createTurnDelegates(turn, deps),
  };
}
