import { type SseEvent, parseSse } from './parse-sse.js';

/** A Server-Sent Events body read as it arrives: a test can act between two events of a running turn. */
export interface SseReader {
  /** Resolves with the first event named `name` (one already read included). */
  until(name: string): Promise<SseEvent>;
  /** Every event, once the stream has ended. */
  all(): Promise<SseEvent[]>;
}

export function readSse(res: Response): SseReader {
  const events: SseEvent[] = [];
  const waiting: Array<{ name: string; resolve: (event: SseEvent) => void }> = [];
  let buffer = '';
  const settle = () => {
    for (const w of [...waiting]) {
      const found = events.find((e) => e.event === w.name);
      if (found) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(found);
      }
    }
  };
  const done = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      buffer += value;
      const cut = buffer.lastIndexOf('\n\n');
      if (cut < 0) continue;
      events.push(...parseSse(buffer.slice(0, cut + 2)));
      buffer = buffer.slice(cut + 2);
      settle();
    }
    if (buffer.trim() !== '') events.push(...parseSse(buffer));
    settle();
    return events;
  })();
  return {
    until: (name) =>
      new Promise((resolve, reject) => {
        waiting.push({ name, resolve });
        settle();
        // A stream that ends without the event fails the wait instead of hanging the test.
        void done.then(() => {
          if (waiting.some((w) => w.resolve === resolve)) reject(new Error(`the stream ended without a ${name} event`));
        }, reject);
      }),
    all: () => done,
  };
}
