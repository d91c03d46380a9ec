/** Tags are compared trimmed, Unicode-normalised and case-folded, so `" Work"` and `"work"` are one tag. */
export function normalizeTag(tag: string): string {
  return tag.normalize('NFKC').trim().toLowerCase();
}

/** Normalises, drops empties and duplicates, keeps first-seen order. */
export function normalizeTags(tags: readonly string[] | undefined): string[] {
  if (!tags) return [];
  return [...new Set(tags.map(normalizeTag).filter((t) => t.length > 0))];
}
