import { z } from 'zod';

/**
 * The JSON error body every route answers with (`errorBody` in ../errors.ts). Reply schemas are
 * plain `z.object`s: the OpenAPI document leaves them open to new fields, while tests parse real
 * replies with them and compare, which catches a field the document does not name.
 */
export const fieldIssueSchema = z
  .object({
    path: z.string().meta({ description: 'Dotted path of the offending field (`tags.0`); empty for the whole input.' }),
    message: z.string(),
  })
  .meta({ id: 'FieldIssue', description: 'One rejected field.' });

export const errorReplySchema = z
  .object({
    error: z.object({
      code: z.string().meta({ description: 'Stable, machine-readable; see each response for the codes it can carry.' }),
      message: z.string().meta({ description: 'For people: names the offending fields or the reason.' }),
      details: z.array(fieldIssueSchema).nullable().meta({ description: 'Each rejected field, for validation errors; null otherwise.' }),
    }),
  })
  .meta({ id: 'ErrorReply', description: 'Every error reply: `{"error":{"code","message","details"}}`.' });

/** The error body narrowed to the codes one response can carry, so clients can switch on them. */
export function errorReplyWith(codes: readonly [string, ...string[]]) {
  return z.object({
    error: z.object({
      code: z.enum(codes),
      message: z.string(),
      details: z.array(fieldIssueSchema).nullable(),
    }),
  });
}
