/** `a, b ,c` → `['a', 'b', 'c']`: tags as people type them in one field. */
export function parseTagList(text: string): string[] {
  return text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
}
