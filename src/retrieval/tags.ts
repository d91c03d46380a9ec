import { z } from 'zod';
import { storableString } from '../text/storable-string.js';

/** Tags are stored on memories, documents and agents' recall filters alike, with one set of limits. */
export const TAG_LIMITS = { maxTags: 64, tagMaxChars: 64 } as const;

/** Tags are compared trimmed, Unicode-normalised and case-folded, so `" Work"` and `"work"` are one tag. */
export function normalizeTag(tag: string): string {
  return tag.normalize('NFKC').trim().toLowerCase();
}

/** Normalises, drops empties and duplicates, keeps first-seen order. */
export function normalizeTags(tags: readonly string[] | undefined): string[] {
  if (!tags) return [];
  return [...new Set(tags.map(normalizeTag).filter((t) => t.length > 0))];
}

// Limits apply to the tag as stored: NFKC can lengthen a string, trimming can empty it.
export const tagSchema = storableString(1, TAG_LIMITS.tagMaxChars).superRefine((tag, ctx) => {
  const normalized = normalizeTag(tag);
  if (normalized.length === 0) ctx.addIssue({ code: 'custom', message: 'must not be blank' });
  else if (normalized.length > TAG_LIMITS.tagMaxChars) {
    ctx.addIssue({ code: 'custom', message: `must be at most ${TAG_LIMITS.tagMaxChars} characters once normalised` });
  }
});

export const tagsSchema = z.array(tagSchema).max(TAG_LIMITS.maxTags);
