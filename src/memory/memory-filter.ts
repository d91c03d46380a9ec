import { type SQL, and, sql } from 'drizzle-orm';
import { memories } from '../db/schema.js';
import { DEFAULT_AGENT_ID, type MemoryFilter } from './memory-types.js';
import { normalizeTags } from './tags.js';

/** A filter after normalisation: what the SQL is built from. */
export interface NormalizedFilter {
  agentId: string;
  tagsAny: string[];
  tagsAll: string[];
  tagsNone: string[];
}

export function normalizeFilter(filter: MemoryFilter = {}): NormalizedFilter {
  return {
    agentId: filter.agentId ?? DEFAULT_AGENT_ID,
    tagsAny: normalizeTags(filter.tagsAny),
    tagsAll: normalizeTags(filter.tagsAll),
    tagsNone: normalizeTags(filter.tagsNone),
  };
}

export function hasTagFilter(filter: NormalizedFilter): boolean {
  return filter.tagsAny.length + filter.tagsAll.length + filter.tagsNone.length > 0;
}

const textArray = (values: string[]) => sql`${`{${values.map(quoteArrayElement).join(',')}}`}::text[]`;

// Array literals are passed as one bound parameter, so only the array syntax needs escaping.
function quoteArrayElement(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The WHERE clause of a filter. `&&` and `@>` are answered by the GIN index on `tags`, and the
 * clause goes inside the query, before ORDER BY/LIMIT, so filtering never shrinks a page.
 */
export function filterToSql(filter: NormalizedFilter): SQL {
  const parts: SQL[] = [sql`${memories.agentId} = ${filter.agentId}`];
  if (filter.tagsAny.length) parts.push(sql`${memories.tags} && ${textArray(filter.tagsAny)}`);
  if (filter.tagsAll.length) parts.push(sql`${memories.tags} @> ${textArray(filter.tagsAll)}`);
  if (filter.tagsNone.length) parts.push(sql`NOT (${memories.tags} && ${textArray(filter.tagsNone)})`);
  return and(...parts)!;
}
