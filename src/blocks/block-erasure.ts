import { and, eq, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { blockHistory, blocks, conversations } from '../db/schema/index.js';

/**
 * A user's blocks, of every agent and their own, with every event of their history (the values
 * they once held are the user's data too); and the events the model wrote in the user's turns to
 * blocks of no user (an agent's, shared by its users), with their approvals: the actor names the
 * turn's user (and its conversation, matched while the conversation is still there). Those
 * blocks' current values are left as they are: they are the agent's, and the API's to rewrite.
 * Counts what went, in `tx`.
 */
export async function eraseUserBlocks(tx: Db, tenantId: string, userId: string): Promise<{ blocks: number; historyEvents: number }> {
  const gone = await tx
    .delete(blocks)
    .where(and(eq(blocks.tenantId, tenantId), eq(blocks.userId, userId)))
    .returning({ label: blocks.label });
  const conversationsOfUser = tx
    .select({ id: sql`${conversations.id}::text` })
    .from(conversations)
    .where(and(eq(conversations.tenantId, tenantId), eq(conversations.userId, userId)));
  const events = await tx
    .delete(blockHistory)
    .where(
      and(
        eq(blockHistory.tenantId, tenantId),
        or(
          eq(blockHistory.userId, userId),
          sql`${blockHistory.actor}->>'userId' = ${userId}`,
          sql`${blockHistory.actor}->>'conversationId' IN ${conversationsOfUser}`,
        ),
      ),
    )
    .returning({ id: blockHistory.id });
  return { blocks: gone.length, historyEvents: events.length };
}

/** A deleted agent's blocks, its own and its views of users, with their history: they go with it. */
export async function deleteAgentBlocks(tx: Db, tenantId: string, agentId: string): Promise<number> {
  // '' is "no agent": the users' own blocks, which no agent's deletion reaches.
  if (agentId === '') return 0;
  const gone = await tx
    .delete(blocks)
    .where(and(eq(blocks.tenantId, tenantId), eq(blocks.agentId, agentId)))
    .returning({ label: blocks.label });
  await tx.delete(blockHistory).where(and(eq(blockHistory.tenantId, tenantId), eq(blockHistory.agentId, agentId)));
  return gone.length;
}
