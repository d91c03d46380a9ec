import type { Schemas } from '../../client/memrag-client.js';

export type Block = Schemas['Block'];

/** One of the three places a block lives: the agent's, the user's, the agent's view of the user. */
export interface BlockScope {
  key: 'agent' | 'user' | 'agent-user';
  agentId: string | null;
  userId: string | null;
  /** The section's heading. */
  title: string;
  /** Who sees its blocks: what the scope means for a turn. */
  reach: string;
}

/**
 * The scopes the header names, in the order a turn's prompt carries them: the agent's, then (with
 * a user) the user's and the agent's own view of them. Without a user only the agent's are there.
 */
export function blockScopesOf(agentId: string, userId: string | undefined): BlockScope[] {
  const agent: BlockScope = { key: 'agent', agentId, userId: null, title: `Agent ${agentId}`, reach: 'Seen by every user of the agent.' };
  if (!userId) return [agent];
  return [
    agent,
    { key: 'user', agentId: null, userId, title: `User ${userId}`, reach: 'Follow the user to every agent.' },
    { key: 'agent-user', agentId, userId, title: `${agentId}’s view of ${userId}`, reach: `Seen by agent ${agentId} in its turns with ${userId} only.` },
  ];
}

/** The query (or body fields) that address a scope: an absent id is "none". */
export function scopeQuery(scope: { agentId: string | null; userId: string | null }): { agentId?: string; userId?: string } {
  return { ...(scope.agentId === null ? {} : { agentId: scope.agentId }), ...(scope.userId === null ? {} : { userId: scope.userId }) };
}

/** A block's scope in words, for buttons' names and the chat's fold-out. */
export function scopeWords(scope: { agentId: string | null; userId: string | null }): string {
  if (scope.agentId !== null && scope.userId !== null) return `${scope.agentId}’s view of ${scope.userId}`;
  return scope.agentId !== null ? `agent ${scope.agentId}` : `user ${scope.userId}`;
}

/** Characters used of the limit, as the gauge's text says it. */
export function usageWords(block: Pick<Block, 'value' | 'limit'>): string {
  const percent = Math.round((block.value.length / block.limit) * 100);
  return `${block.value.length.toLocaleString('en')} / ${block.limit.toLocaleString('en')} characters (${percent}%)`;
}
