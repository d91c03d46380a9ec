import { z } from 'zod';

// With the u flag a surrogate pair is one code point, so this matches only unpaired halves.
export const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
export const CONTROL_CHAR = /[\u0000-\u001F\u007F-\u009F]/;
export const NUL_MESSAGE = 'must not contain NUL (\\u0000) characters';
export const SURROGATE_MESSAGE = 'must not contain unpaired UTF-16 surrogates';

/** Refuses what Postgres cannot store in text or jsonb (see `storableString`), on any string schema. */
export const storable = (schema: z.ZodString) =>
  schema.refine((s) => !s.includes('\u0000'), NUL_MESSAGE).refine((s) => !LONE_SURROGATE.test(s), SURROGATE_MESSAGE);

/**
 * Postgres text cannot hold NUL (the insert fails), and an unpaired surrogate is not UTF-8: text
 * columns would silently store U+FFFD and jsonb rejects it. Both are refused here, as a 400.
 */
export const storableString = (min: number, max: number) => storable(z.string().min(min).max(max));

/** Where a JSON value holds a string (or key) jsonb cannot store, and why; undefined when none does. */
export function unstorableIn(value: unknown, path: (string | number)[] = []): { path: (string | number)[]; message: string } | undefined {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) return { path, message: NUL_MESSAGE };
    if (LONE_SURROGATE.test(value)) return { path, message: SURROGATE_MESSAGE };
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of entries) {
    if (typeof k === 'string' && (k.includes('\u0000') || LONE_SURROGATE.test(k)))
      return { path: [...path, k], message: `key ${k.includes('\u0000') ? NUL_MESSAGE : SURROGATE_MESSAGE}` };
    const found = unstorableIn(v, [...path, k]);
    if (found) return found;
  }
  return undefined;
}

export const notBlank = (s: string) => s.trim() !== '';
