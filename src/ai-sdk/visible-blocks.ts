import type { MemragClient, Schemas } from '../client/memrag-client.js';
import { dataOf } from './memrag-api-error.js';

export type Block = Schemas['Block'];

/** Whose blocks: a turn of `agentId` (the server's `default` agent when left out) with `userId`, if any. */
export interface BlockViewer {
  agentId?: string | undefined;
  userId?: string | undefined;
}

/** The agent memrag's own turns run as when a request names none. */
const DEFAULT_AGENT_ID = 'default';

/** The scopes a turn sees, in the order memrag's prompt carries them: the agent's, the user's, the agent's view of the user. */
function scopesOf({ agentId = DEFAULT_AGENT_ID, userId }: BlockViewer): { agentId?: string; userId?: string }[] {
  return userId ? [{ agentId }, { userId }, { agentId, userId }] : [{ agentId }];
}

/** The blocks a turn of the viewer sees, as memrag's own turns see them (`GET /v1/blocks`, one call per scope). */
export async function visibleBlocks(client: MemragClient, viewer: BlockViewer, signal?: AbortSignal): Promise<Block[]> {
  const pages = await Promise.all(
    scopesOf(viewer).map(async (query) => dataOf('listBlocks', await client.GET('/v1/blocks', { params: { query }, ...(signal ? { signal } : {}) })).blocks),
  );
  return pages.flat();
}

/** How specific a block's scope is: the agent's view of the user, then the user's, then the agent's. */
const specificity = (block: Block) => (block.agentId && block.userId ? 2 : block.userId ? 1 : 0);

/** The block a write to `label` goes to, as memrag's own tools choose it: the most specific one the turn sees. */
export function mostSpecific(blocks: readonly Block[], label: string): Block | undefined {
  return blocks.filter((b) => b.label === label).sort((a, b) => specificity(b) - specificity(a))[0];
}

/** Which of the three scopes a block is of, in words the model reads. */
export function scopeWords(block: Block): string {
  if (block.agentId && block.userId) return "this agent's own about this user";
  return block.userId ? "the user's, shared with every agent" : "the agent's, shared with all its users";
}
