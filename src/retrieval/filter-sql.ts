import { type SQL, and, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { textArray } from '../db/sql-arrays.js';
import type { CorpusFilter, TagFilter } from './filter.js';
import { metadataFilterToSql } from './metadata-filter-sql.js';

/** The columns a corpus's filters apply to. */
export interface FilterColumns {
  tenantId: PgColumn;
  /** Absent on a corpus without tags (turns): a tag filter on it is a wiring mistake, and throws. */
  tags?: PgColumn;
  /** Each name a `CorpusFilter.equals` or `notEquals` may hold, and its column. */
  equals?: Readonly<Record<string, PgColumn>>;
  /** The jsonb column `CorpusFilter.metadata` applies to. */
  metadata?: PgColumn;
  /** Rows with this set are invalid (contradicted): left out unless the filter includes them. */
  validTo?: PgColumn;
  /** Rows past this time are gone, whatever the filter says, until a sweeper deletes them. */
  expiresAt?: PgColumn;
  /** When the row was said or written: `CorpusFilter.until` applies to it. */
  at?: PgColumn;
  /** When the row last changed: `CorpusFilter.unchangedAfter` applies to it. */
  changedAt?: PgColumn;
  /** When the row's fact began and stopped holding (null: unbounded): `CorpusFilter.validAt` applies to them. */
  validFrom?: PgColumn;
  validUntil?: PgColumn;
}

/** Valid time: the fact held at `at` (an instant, or `now`) when it began by then and had not stopped. */
export function validAtSql(validAt: string, validFrom: PgColumn | SQL, validUntil: PgColumn | SQL): SQL {
  const at = validAt === 'now' ? sql`now()` : sql`${validAt}::timestamptz`;
  return sql`(${validFrom} IS NULL OR ${validFrom} <= ${at}) AND (${validUntil} IS NULL OR ${validUntil} > ${at})`;
}

/**
 * Conditions on a `text[]` tags column. `&&` and `@>` are answered by a GIN index on it, and the
 * conditions go inside the query, before ORDER BY/LIMIT, so filtering never shrinks a page.
 */
export function tagConditions(column: PgColumn | SQL, filter: TagFilter): SQL[] {
  const parts: SQL[] = [];
  if (filter.tagsAny.length) parts.push(sql`${column} && ${textArray(filter.tagsAny)}`);
  if (filter.tagsAll.length) parts.push(sql`${column} @> ${textArray(filter.tagsAll)}`);
  if (filter.tagsNone.length) parts.push(sql`NOT (${column} && ${textArray(filter.tagsNone)})`);
  return parts;
}

/**
 * The WHERE clause of a filter on a corpus's columns: tenant, equalities and inequalities,
 * liveness, then the tag and metadata conditions, all inside the query so that they apply before
 * any LIMIT.
 */
export function filterToSql(filter: CorpusFilter, columns: FilterColumns): SQL {
  // A wiring mistake, not a client's: a filter the corpus cannot apply must never be dropped silently.
  const columnFor = (name: string) => {
    const column = columns.equals?.[name];
    if (!column) throw new Error(`this corpus has no column for the filter "${name}"`);
    return column;
  };
  const equalities = Object.entries(filter.equals).map(([name, value]) => sql`${columnFor(name)} = ${value}`);
  const inequalities = Object.entries(filter.notEquals ?? {}).map(([name, value]) => sql`${columnFor(name)} <> ${value}`);
  const memberships = Object.entries(filter.oneOf ?? {}).map(([name, values]) =>
    values.length === 1 ? sql`${columnFor(name)} = ${values[0]}` : sql`${columnFor(name)} = ANY(${textArray(values)})`,
  );
  const live: SQL[] = [];
  if (columns.expiresAt) live.push(sql`(${columns.expiresAt} IS NULL OR ${columns.expiresAt} > now())`);
  if (columns.validTo && !filter.includeInvalid) live.push(sql`${columns.validTo} IS NULL`);
  if (filter.until !== undefined) {
    if (!columns.at) throw new Error('this corpus has no time column: an asOf cannot apply to it');
    // A moment given to the millisecond covers all of it: the database's times have microseconds.
    live.push(sql`${columns.at} < (${filter.until}::timestamptz + interval '1 millisecond')`);
  }
  if (filter.unchangedAfter !== undefined) {
    if (!columns.changedAt) throw new Error('this corpus has no time of last change: an asOf cannot apply to it');
    live.push(sql`${columns.changedAt} < (${filter.unchangedAfter}::timestamptz + interval '1 millisecond')`);
  }
  if (filter.validAt !== undefined) {
    if (!columns.validFrom || !columns.validUntil) throw new Error('this corpus has no valid time: a validAt cannot apply to it');
    live.push(validAtSql(filter.validAt, columns.validFrom, columns.validUntil));
  }
  const { tags } = filter;
  const tagged = tags.tagsAny.length + tags.tagsAll.length + tags.tagsNone.length > 0;
  if (tagged && !columns.tags) throw new Error('this corpus has no tags: a tag filter cannot apply to it');
  const tagSql = columns.tags ? tagConditions(columns.tags, tags) : [];
  let metadata: SQL[] = [];
  if (filter.metadata) {
    if (!columns.metadata) throw new Error('this corpus has no metadata column to filter on');
    metadata = [metadataFilterToSql(filter.metadata, columns.metadata)];
  }
  return and(sql`${columns.tenantId} = ${filter.tenantId}`, ...equalities, ...inequalities, ...memberships, ...live, ...tagSql, ...metadata)!;
}
