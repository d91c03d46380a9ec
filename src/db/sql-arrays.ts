import { type SQL, sql } from 'drizzle-orm';
import { vectorToBinary } from './vector-wire-format.js';

/**
 * Arrays as one bound parameter in Postgres' array literal syntax, which both drivers pass
 * through unchanged; only the literal's own syntax needs escaping.
 */
export const textArray = (values: readonly string[]): SQL => sql`${`{${values.map(quoteArrayElement).join(',')}}`}::text[]`;

export const intArray = (values: readonly number[]): SQL => sql`${`{${values.map((v) => String(Math.trunc(v))).join(',')}}`}::int[]`;

export const uuidArray = (values: readonly string[]): SQL => sql`${`{${values.join(',')}}`}::uuid[]`;

export function quoteArrayElement(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A query vector as a parameter, bound in binary. */
export const vectorParam = (v: readonly number[]): SQL => sql`${vectorToBinary(v)}::vector`;
