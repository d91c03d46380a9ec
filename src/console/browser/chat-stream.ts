import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { Schemas } from '../../client/memrag-client.js';

export type ChatStreamEvent = Schemas['ChatStreamEvent'];

/**
 * The events of a streamed chat (`POST /v1/chat`, approvals and tool outputs with `stream: true`),
 * as the OpenAPI document's ChatStreamEvent declares them. eventsource-parser reads the SSE
 * framing; fetch's stream, unlike EventSource, can POST and send the Bearer token.
 */
export async function readChatEvents(body: ReadableStream<Uint8Array>, onEvent: (event: ChatStreamEvent) => void): Promise<void> {
  // TypeScript's DOM types want the decoder fed BufferSource; bytes are one.
  const text = (body as ReadableStream<BufferSource>).pipeThrough(new TextDecoderStream());
  const reader = text.pipeThrough(new EventSourceParserStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onEvent({ event: value.event, data: JSON.parse(value.data) } as ChatStreamEvent);
  }
}
