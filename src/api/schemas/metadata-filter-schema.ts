import { z } from 'zod';
import { type MetadataFilter, parseMetadataFilter } from '../../retrieval/metadata-filter.js';

const DESCRIPTION =
  'A filter on top-level metadata keys: a value for equality, or an object of operators `$eq $ne $in $nin $gt $gte $lt $lte ' +
  '$exists`, combined by `$and`/`$or`, e.g. `{"project":"apollo","priority":{"$gte":2}}`. `$ne`/`$nin` match memories ' +
  'without the key; `$gt`… compare numbers with numbers and strings with strings (byte order). Applied in SQL before the LIMIT.';

/** Adds the parser's issues at their paths under the field, so a 400 names `metadata.priority.$gte`. */
function toFilter(value: unknown, ctx: z.RefinementCtx): MetadataFilter {
  const parsed = parseMetadataFilter(value);
  if (parsed.ok) return parsed.filter;
  for (const issue of parsed.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  return z.NEVER;
}

/** The filter in a JSON body. */
export const metadataFilterSchema = z
  .record(z.string(), z.unknown())
  .transform(toFilter)
  // The parser's rules are code: this is what the OpenAPI document shows of them.
  .meta({ type: 'object', description: DESCRIPTION });

/**
 * The same filter as a JSON string in a query string (`?metadata={"project":"apollo"}`), checked
 * here and still a string once parsed: query parameters are documented as the values they hold
 * once parsed, and a transform into the filter cannot be shown. `metadataFilterFromQuery` reads it.
 */
export const metadataFilterQuerySchema = z
  .string()
  .max(8_192)
  .superRefine((text, ctx) => {
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object (URL-encoded)' });
      return;
    }
    const parsed = parseMetadataFilter(value);
    if (!parsed.ok) for (const issue of parsed.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .meta({ description: `${DESCRIPTION} Given as JSON in the query string.` });

/** The filter of a query string that `metadataFilterQuerySchema` accepted. */
export function metadataFilterFromQuery(text: string): MetadataFilter {
  const parsed = parseMetadataFilter(JSON.parse(text) as unknown);
  if (!parsed.ok) throw new Error('metadataFilterFromQuery: the query schema should have refused this filter');
  return parsed.filter;
}
