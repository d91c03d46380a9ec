import { type SQL, and, sql } from 'drizzle-orm';
import { memories } from '../db/schema.js';
import { tagConditions } from '../db/tag-filter.js';
import { DEFAULT_AGENT_ID, type MemoryFilter } from './memory-types.js';
import { normalizeTags } from '../retrieval/tags.js';

/** A filter after normalisation: what the SQL is built from. */
export interface NormalizedFilter {
  /** The store's tenant, never the client's input: it comes with the filter so no query can leave it out. */
  tenantId: string;
  agentId: string;
  tagsAny: string[];
  tagsAll: string[];
  tagsNone: string[];
}

export function normalizeFilter(tenantId: string, filter: MemoryFilter = {}): NormalizedFilter {
  return {
    tenantId,
    agentId: filter.agentId ?? DEFAULT_AGENT_ID,
    tagsAny: normalizeTags(filter.tagsAny),
    tagsAll: normalizeTags(filter.tagsAll),
    tagsNone: normalizeTags(filter.tagsNone),
  };
}

export function hasTagFilter(filter: NormalizedFilter): boolean {
  return filter.tagsAny.length + filter.tagsAll.length + filter.tagsNone.length > 0;
}

/** The WHERE clause of a filter: the tenant and agent, and the tag conditions answered by the GIN index. */
export function filterToSql(filter: NormalizedFilter): SQL {
  return and(sql`${memories.tenantId} = ${filter.tenantId}`, sql`${memories.agentId} = ${filter.agentId}`, ...tagConditions(memories.tags, filter))!;
}
