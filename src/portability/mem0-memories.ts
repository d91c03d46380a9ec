import { derivedUuid } from '../util/derived-uuid.js';
import type { ExportedMemory } from '../memory/memory-export.js';
import { DEFAULT_AGENT_ID } from '../memory/memory-types.js';
import { normalizeTags } from '../retrieval/tags.js';

/** One Mem0 memory as its export holds it, checked (see the import route's schema). */
export interface Mem0Item {
  id: string;
  memory: string;
  hash?: string | null;
  metadata?: Record<string, unknown> | null;
  categories?: string[] | null;
  created_at?: string | null;
  updated_at?: string | null;
  user_id?: string | null;
  agent_id?: string | null;
}

/**
 * A Mem0 memory as a memory of the importing tenant: its user and agent (else the defaults given),
 * times, categories as tags and metadata, keyed `mem0:<id>` with the id in `metadata.mem0Id`, so
 * that importing it again finds it. Its one history event is its creation, at Mem0's `created_at`.
 */
export function fromMem0(item: Mem0Item, defaults: { tenantId: string; agentId?: string; userId?: string | null }, importedAt: Date): ExportedMemory {
  const createdAt = item.created_at ?? importedAt.toISOString();
  const updatedAt = item.updated_at ?? createdAt;
  const metadata = { ...(item.metadata ?? {}), mem0Id: item.id, ...(item.hash ? { mem0Hash: item.hash } : {}) };
  const tags = normalizeTags(item.categories ?? []);
  // Derived from Mem0's id, so the row and its history name the same memory, and from the tenant:
  // memory ids are one key space over every tenant, and two tenants importing the same Mem0 id
  // must not meet there (the second would find the id taken, and so learn the first imported it).
  const id = mem0MemoryId(defaults.tenantId, item.id);
  return {
    id,
    agentId: item.agent_id ?? defaults.agentId ?? DEFAULT_AGENT_ID,
    userId: item.user_id ?? defaults.userId ?? null,
    key: `mem0:${item.id}`,
    content: item.memory,
    tags,
    metadata,
    sources: [],
    validFrom: null,
    validUntil: null,
    validTo: null,
    expiresAt: null,
    status: 'active',
    quarantineReasons: [],
    createdAt,
    updatedAt,
    history: [
      {
        memoryId: id,
        event: 'created',
        content: item.memory,
        previousContent: null,
        tags,
        previousTags: null,
        metadata,
        sources: [],
        validFrom: null,
        validUntil: null,
        expiresAt: null,
        status: 'active',
        quarantineReasons: [],
        actor: { type: 'api' },
        at: createdAt,
      },
    ],
  };
}

/** The memory id a tenant's import gives a Mem0 memory: the same on every import into that tenant. */
export function mem0MemoryId(tenantId: string, mem0Id: string): string {
  return derivedUuid(`mem0\u0000${tenantId}\u0000${mem0Id}`);
}
