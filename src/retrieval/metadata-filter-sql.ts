import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { MetadataFilter, MetadataScalar } from './metadata-filter.js';

/**
 * The SQL of a metadata filter on a jsonb column, every value a bound parameter. Semantics, the
 * same as `matchesMetadataFilter`:
 * - `eq` is containment (`metadata @> {"key": value}`), which the GIN `jsonb_path_ops` index
 *   answers; `null` matches a stored JSON null, not a missing key;
 * - `ne` and `nin` are the negations of `eq` and `in`: they match rows without the key, as Mongo's do;
 * - `gt`/`gte`/`lt`/`lte` match only a stored value of the operand's type: numbers numerically,
 *   strings by bytes (`COLLATE "C"`, the same on every server and in the reference);
 * - `exists` is the key being present (its value may be null).
 */
export function metadataFilterToSql(filter: MetadataFilter, column: PgColumn | SQL): SQL {
  if ('and' in filter)
    return filter.and.length === 0
      ? sql`TRUE`
      : sql`(${sql.join(
          filter.and.map((f) => metadataFilterToSql(f, column)),
          sql` AND `,
        )})`;
  if ('or' in filter)
    return filter.or.length === 0
      ? sql`FALSE`
      : sql`(${sql.join(
          filter.or.map((f) => metadataFilterToSql(f, column)),
          sql` OR `,
        )})`;
  const { key } = filter;
  const contains = (value: MetadataScalar) => sql`${column} @> jsonb_build_object(${key}::text, ${JSON.stringify(value)}::jsonb)`;
  switch (filter.op) {
    case 'eq':
      return contains(filter.value);
    case 'ne':
      return sql`NOT (${contains(filter.value)})`;
    case 'in':
      return filter.values.length === 0 ? sql`FALSE` : sql`(${sql.join(filter.values.map(contains), sql` OR `)})`;
    case 'nin':
      return filter.values.length === 0 ? sql`TRUE` : sql`NOT (${sql.join(filter.values.map(contains), sql` OR `)})`;
    case 'exists':
      // jsonb_exists is the `?` operator, spelt so that no driver mistakes it for a placeholder.
      return filter.exists ? sql`jsonb_exists(${column}, ${key}::text)` : sql`NOT jsonb_exists(${column}, ${key}::text)`;
    default: {
      const op = sql.raw({ gt: '>', gte: '>=', lt: '<', lte: '<=' }[filter.op]);
      const field = sql`${column} -> ${key}::text`;
      if (typeof filter.value === 'number') {
        return sql`(jsonb_typeof(${field}) = 'number' AND (${column} ->> ${key}::text)::numeric ${op} ${String(filter.value)}::numeric)`;
      }
      return sql`(jsonb_typeof(${field}) = 'string' AND (${column} ->> ${key}::text) COLLATE "C" ${op} ${String(filter.value)}::text COLLATE "C")`;
    }
  }
}
