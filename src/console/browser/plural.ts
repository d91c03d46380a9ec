/** `1 memory`, `2 memories`: counts are read aloud and shown, so they agree in number. */
export function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
