import type { MetadataFilter } from './metadata-filter.js';
import { normalizeTags } from './tags.js';

/** Tag filters as clients give them: any spelling, any case, maybe absent. */
export interface TagFilterInput {
  /** At least one of these tags. */
  tagsAny?: readonly string[];
  /** Every one of these tags. */
  tagsAll?: readonly string[];
  /** None of these tags. */
  tagsNone?: readonly string[];
}

/** Tag filters after normalisation (see `normalizeTags`): what a query is built from. */
export interface TagFilter {
  tagsAny: readonly string[];
  tagsAll: readonly string[];
  tagsNone: readonly string[];
}

/**
 * A search or list filter over one corpus, translated from the client's input and not yet SQL
 * (filter-sql.ts builds that from the corpus's columns). The tenant is the store's, never the
 * client's: it comes with every filter so that no query can leave it out.
 */
export interface CorpusFilter {
  tenantId: string;
  /** Columns that must equal a value, by the corpus's name for them (e.g. `agentId`). */
  equals: Readonly<Record<string, string>>;
  /** Columns that must hold one of several values (a user's memories and the shared ones). */
  oneOf?: Readonly<Record<string, readonly string[]>>;
  /**
   * Columns that must differ from a value, named as in `equals`: what a search leaves out, such as
   * the conversation a turn is recalling from (its own turns are in its history already).
   */
  notEquals?: Readonly<Record<string, string>>;
  tags: TagFilter;
  /** On the corpus's metadata column; only where it has one. */
  metadata?: MetadataFilter;
  /** Rows the corpus marks invalid are left out unless this is true. */
  includeInvalid?: boolean;
  /**
   * An instant (ISO 8601): rows the corpus dates later are left out, as a search asked at that
   * moment would have found them (`asOf`). Only on a corpus with a time column.
   */
  until?: string;
  /**
   * An instant (ISO 8601): rows changed later are left out (a read as of that moment takes those
   * from their history instead). Only on a corpus with a time of last change.
   */
  unchangedAfter?: string;
  /**
   * Valid time: only rows whose fact held at this instant (ISO 8601, or `now`). Absent: no
   * condition. Only on a corpus with valid-time columns.
   */
  validAt?: string;
}

export function normalizeTagFilter(input: TagFilterInput = {}): TagFilter {
  return { tagsAny: normalizeTags(input.tagsAny), tagsAll: normalizeTags(input.tagsAll), tagsNone: normalizeTags(input.tagsNone) };
}

export function corpusFilter(
  tenantId: string,
  input: TagFilterInput = {},
  equals: Readonly<Record<string, string>> = {},
  notEquals?: Readonly<Record<string, string>>,
): CorpusFilter {
  return { tenantId, equals, ...(notEquals ? { notEquals } : {}), tags: normalizeTagFilter(input) };
}
