import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { Schemas } from '../../client/memrag-client.js';

/** A turn waiting: for tool outputs, approvals, or (`paused`) a person who asked it to stop. */
export type PausedReply = Omit<Schemas['PausedReply'], 'status'> & { status: Schemas['PausedReply']['status'] | 'paused' };

/**
 * The agent loop's events as the console reads them (`docs/api.md`, "Chat"), declared here beside
 * the OpenAPI document's own so that the console reads them whichever client types it is built with.
 */
export type AgentLoopEvent =
  | { event: 'thinking'; data: { text: string } }
  | { event: 'steer'; data: { message: string } }
  | { event: 'turn_start'; data: { iteration: number } }
  | { event: 'turn_end'; data: { iteration: number; finishReason: string | null } }
  | { event: 'retry'; data: { attempt: number; delayMs: number; status: number | null; reason: string } }
  | { event: 'paused'; data: PausedReply };

export type ChatStreamEvent = Schemas['ChatStreamEvent'] | AgentLoopEvent;

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
