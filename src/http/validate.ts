import type { Context } from 'hono';
import type { z } from 'zod';
import { type FieldIssue, invalidJson, validationError } from '../api/errors.js';

/** Where a value came from; names the whole input in messages about it. */
export type InputSource = 'body' | 'query' | 'path';

/** Validates `value` with `schema`, or throws a 400 naming each offending field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, source: InputSource): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationError(toFieldIssues(result.error), source);
}

/** The `:id` path parameter of a route, checked by `schema` (a 400 naming `id` when it does not pass). */
export function idParam<S extends z.ZodType>(c: { req: { param(name: 'id'): string | undefined } }, schema: S): z.output<S> {
  return parseWith(schema, { id: c.req.param('id') }, 'path');
}

export function toFieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue): FieldIssue[] => {
    const path = issue.path.map(String).join('.');
    // One entry per unknown field, so each typo is named where the client will look for it.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: path ? `${path}.${key}` : key, message: 'unknown field' }));
    }
    return [{ path, message: issue.message }];
  });
}

/**
 * The body as JSON, whatever the content type: `curl -d` sends form-encoded headers with JSON
 * bodies, and a body that is not JSON fails here either way. Empty reads as `undefined`.
 */
export async function readJsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw invalidJson(`The request body is not valid JSON: ${(err as Error).message}`);
  }
}

export async function parseBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const body = await readJsonBody(c);
  if (body === undefined) throw invalidJson('The request body is empty; a JSON object is expected');
  return parseWith(schema, body, 'body');
}

export interface QueryOptions {
  /** Parameters that hold lists: repeated (`?t=a&t=b`) and/or comma-separated (`?t=a,b`). */
  lists?: readonly string[];
}

/**
 * The query string as an object for `schema`. Empty values count as absent, as in the config;
 * a scalar parameter given twice stays an array, so the schema rejects it instead of one
 * value silently winning.
 */
export function queryObject(c: Context, options: QueryOptions = {}): Record<string, unknown> {
  const lists = new Set(options.lists ?? []);
  const entries: [string, unknown][] = [];
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (lists.has(name)) {
      entries.push([
        name,
        values
          .flatMap((v) => v.split(','))
          .map((v) => v.trim())
          .filter((v) => v !== ''),
      ]);
      continue;
    }
    const present = values.filter((v) => v !== '');
    if (present.length > 0) entries.push([name, present.length === 1 ? present[0] : present]);
  }
  // fromEntries defines own properties, so `?__proto__=` reaches the schema as an unknown field.
  return Object.fromEntries(entries);
}

/**
 * Refuses a query string that names a parameter outside `known` (a 400 naming each, worded as a
 * strict query schema words it), whatever its value: defineRoute checks every route with it.
 */
export function rejectUnknownQueryParameters(c: Context, known: ReadonlySet<string>): void {
  const unknown = Object.keys(c.req.queries()).filter((name) => !known.has(name));
  if (unknown.length > 0)
    throw validationError(
      unknown.map((name) => ({ path: name, message: 'unknown field' })),
      'query',
    );
}

export function parseQuery<S extends z.ZodType>(c: Context, schema: S, options: QueryOptions = {}): z.output<S> {
  return parseWith(schema, queryObject(c, options), 'query');
}
