export interface SseEvent {
  event: string;
  /** The frame's `id:`, when it has one. */
  id?: string;
  // Tests read the shape they expect; a wrong guess fails the assertion, not the compiler.
  data: any;
}

/** Splits a Server-Sent Events body into its events, each `data` parsed as JSON. */
export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
      return { event, ...(id === undefined ? {} : { id }), data: JSON.parse(data) as unknown };
    });
}
