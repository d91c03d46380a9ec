import type { Db } from '../db/database.js';
import { conversations } from '../db/schema/index.js';

const TITLE_MAX_CHARS = 100;

/** Where a delegation's turn is stored: a conversation of the role's agent, linked to the lead's. */
export interface ChildConversations {
  /**
   * Opens the child conversation before its turn runs, so that the turn is stored under the link
   * from its first message: it is never listed among the user's conversations nor recalled.
   */
  open(input: { id: string; agentId: string; userId: string | null; parentConversationId: string; task: string }): Promise<void>;
}

export function createChildConversations(db: Db, tenantId: string): ChildConversations {
  return {
    async open(input) {
      await db.insert(conversations).values({
        id: input.id,
        tenantId,
        agentId: input.agentId,
        userId: input.userId ?? '',
        title: input.task.slice(0, TITLE_MAX_CHARS),
        parentConversationId: input.parentConversationId,
      });
    },
  };
}
