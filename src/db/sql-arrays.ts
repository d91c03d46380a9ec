import { type SQL, sql } from 'drizzle-orm';
import { vectorToBinary } from './vector-wire-format.js';

/**
 * Arrays as one bound parameter in Postgres' array literal syntax, which both drivers pass
 * through unchanged; only the literal's own syntax needs escaping.
 */
export const textArray = (values: readonly string[]): SQL => sql`${textArrayLiteral(values)}::text[]`;

export const intArray = (values: readonly number[]): SQL => sql`${intArrayLiteral(values)}::int[]`;

/** The parameter `textArray` binds, for a statement built with a placeholder in its place. */
export const textArrayLiteral = (values: readonly string[]): string => `{${values.map(quoteArrayElement).join(',')}}`;

/** The parameter `intArray` binds. */
export const intArrayLiteral = (values: readonly number[]): string => `{${values.map((v) => String(Math.trunc(v))).join(',')}}`;

export const uuidArray = (values: readonly string[]): SQL => sql`${`{${values.join(',')}}`}::uuid[]`;

export function quoteArrayElement(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A query vector as a parameter, bound in binary. */
export const vectorParam = (v: readonly number[]): SQL => sql`${vectorToBinary(v)}::vector`;
