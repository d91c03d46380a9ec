import type { AgentStore } from '../agents/agent-store.js';
import { delegationLimitsOf } from './cast-roles.js';

/**
 * The tightest maxDepth over a run's lineage: an ancestor's limit holds for every run below it, so a
 * lead with maxDepth 1 gets no grandchildren whatever its child's own setting says. `stack` is the
 * lineage's (the top agent first, the delegating one last, whose limit is `own`); `setBy` names the
 * ancestor whose limit binds, undefined when it is the delegating agent's own.
 */
export async function lineageDepthLimit(
  stack: readonly string[],
  own: number,
  agents: Pick<AgentStore, 'get'> | undefined,
): Promise<{ maxDepth: number; setBy: string | undefined }> {
  let limit: { maxDepth: number; setBy: string | undefined } = { maxDepth: own, setBy: undefined };
  for (const agentId of stack.slice(0, -1)) {
    const stored = agents ? await agents.get(agentId) : null;
    const { maxDepth } = delegationLimitsOf(stored);
    if (maxDepth < limit.maxDepth) limit = { maxDepth, setBy: agentId };
  }
  return limit;
}
