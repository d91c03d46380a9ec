import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/** A request body's lines as they arrive, numbered from 1 (blank lines counted too), never the whole body at once. */
export async function* ndjsonLines(body: ReadableStream<Uint8Array> | null): AsyncGenerator<{ line: number; text: string }> {
  if (!body) return;
  const lines = createInterface({ input: Readable.fromWeb(body as WebReadableStream<Uint8Array>), crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  for await (const text of lines) yield { line: ++line, text };
}
