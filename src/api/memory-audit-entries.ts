import type { NewAuditEntry } from '../audit/audit-types.js';
import { DEFAULT_AGENT_ID, type MemoryScope } from '../memory/memory-types.js';

/**
 * The audit entry of one memory's deletion, whichever edge deleted it (the caller adds who). The
 * key and scope only: the entry must never bring back the content it records the removal of.
 */
export function memoryDeletedEntry(key: string, scope: MemoryScope): Omit<NewAuditEntry, 'actor'> {
  return { action: 'memory.deleted', userId: scope.userId ?? null, details: { key, agentId: scope.agentId ?? DEFAULT_AGENT_ID } };
}
