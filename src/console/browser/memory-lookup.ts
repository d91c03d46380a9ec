import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';

/**
 * A memory by key as a user sees it: theirs, else the agent's shared one of that key (what their
 * chat recalls). A citation names the key and agent but not the user, so both are tried.
 */
export async function lookUpMemory(
  session: ApiSession,
  key: string,
  agentId: string,
  userId: string | undefined,
): Promise<{ memory: Schemas['Memory'] } | { error: string }> {
  if (userId) {
    const own = await session.client.GET('/v1/memories/{key}', { params: { path: { key }, query: { agentId, userId } } });
    if (own.data) return { memory: own.data.memory };
    if (own.response.status !== 404) return { error: describeError(own.error, own.response) };
  }
  const { data, error, response } = await session.client.GET('/v1/memories/{key}', { params: { path: { key }, query: { agentId } } });
  return data ? { memory: data.memory } : { error: describeError(error, response) };
}
