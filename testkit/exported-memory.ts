import { randomUUID } from 'node:crypto';
import type { ExportedMemory } from '../src/memory/memory-export.js';

/** The `i`th memory of `userId` as an export carries it: a fresh id, no history, content naming both. */
export function exportedMemory(userId: string, i: number, content = `${userId} remembers item ${i}`): ExportedMemory {
  return {
    id: randomUUID(),
    agentId: 'default',
    userId,
    key: `k-${String(i).padStart(3, '0')}`,
    content,
    tags: [],
    metadata: {},
    sources: [],
    validFrom: null,
    validUntil: null,
    validTo: null,
    expiresAt: null,
    status: 'active',
    quarantineReasons: [],
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    history: [],
  };
}
