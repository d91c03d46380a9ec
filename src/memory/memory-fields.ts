import { z } from 'zod';
import { TAG_LIMITS } from '../retrieval/tags.js';
import { CONTROL_CHAR, LONE_SURROGATE, SURROGATE_MESSAGE, notBlank, storableString } from '../text/storable-string.js';

/**
 * The fields of a memory as they can be stored, checked the same way wherever one comes from:
 * the HTTP routes and the chat's `save_memory` tool alike.
 */
export const MEMORY_FIELD_LIMITS = {
  keyMaxChars: 256,
  contentMaxChars: 100_000,
  ...TAG_LIMITS,
} as const;

export const keySchema = z
  .string()
  .min(1)
  .max(MEMORY_FIELD_LIMITS.keyMaxChars)
  .refine((s) => !CONTROL_CHAR.test(s), 'must not contain control characters')
  .refine((s) => !LONE_SURROGATE.test(s), SURROGATE_MESSAGE);

export const contentSchema = storableString(1, MEMORY_FIELD_LIMITS.contentMaxChars).refine(notBlank, 'must not be blank');
