import { type SQL, and, eq } from 'drizzle-orm';
import { memories } from '../db/schema/index.js';
import { storedUserId } from './memory-corpus.js';
import { notExpired } from './memory-rows.js';
import { DEFAULT_AGENT_ID, type MemoryScope } from './memory-types.js';

/** A scope as the rows hold it: the default agent filled in, the agent's shared memories under user ''. */
export interface StoredScope {
  agentId: string;
  userId: string;
}

export const storedScope = (scope: MemoryScope = {}): StoredScope => ({ agentId: scope.agentId ?? DEFAULT_AGENT_ID, userId: storedUserId(scope.userId) });

/** The tenant's row under `key` in the scope, expired or not. */
export const byKey = (tenantId: string, key: string, scope: StoredScope): SQL =>
  and(eq(memories.tenantId, tenantId), eq(memories.agentId, scope.agentId), eq(memories.userId, scope.userId), eq(memories.key, key))!;

/** The tenant's unexpired rows in the scope, whatever their key. */
export const inScope = (tenantId: string, scope: StoredScope): SQL =>
  and(eq(memories.tenantId, tenantId), eq(memories.agentId, scope.agentId), eq(memories.userId, scope.userId), notExpired)!;
