import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import type { ChatEvent, ChatListener, TurnReply } from '../chat/chat-service.js';
import type { Source } from '../retrieval/source.js';
import type { LiveRun } from '../runs/live-runs.js';
import type { Logger } from '../observability/logger.js';
import { errorReplyFor } from '../api/error-mapping.js';
import { heldUntilDone } from './middleware/tenant-admission.js';

/** A chat event as one SSE frame: `event: <name>` and `data: <JSON>`; undefined when it is not sent. */
export function toSseFrame(event: ChatEvent, logger: Logger): { event: string; data: unknown } | undefined {
  switch (event.type) {
    case 'retrieval':
      return { event: 'retrieval', data: { runId: event.runId, conversationId: event.conversationId, sources: event.sources.map(withoutPassage) } };
    case 'delta':
      return { event: 'delta', data: { text: event.text } };
    case 'steer':
      return { event: 'steer', data: { message: event.message } };
    case 'thinking':
      return { event: 'thinking', data: { text: event.text } };
    case 'turn_start':
      return { event: 'turn_start', data: { iteration: event.iteration } };
    case 'turn_end':
      return { event: 'turn_end', data: { iteration: event.iteration, finishReason: event.finishReason, usage: event.usage } };
    case 'retry':
      return { event: 'retry', data: { attempt: event.attempt, delayMs: event.delayMs, status: event.status, reason: event.reason } };
    case 'tool_start':
      return { event: 'tool_start', data: { id: event.id, name: event.name, arguments: event.arguments } };
    case 'tool_end':
      return {
        event: 'tool_end',
        data: { id: event.id, name: event.name, isError: event.isError, result: event.result, sources: event.sources.map(withoutPassage) },
      };
    case 'compaction':
      return {
        event: 'compaction',
        data: {
          strategy: event.strategy,
          strategies: event.strategies,
          tokensBefore: event.tokensBefore,
          tokensAfter: event.tokensAfter,
          limit: event.limit,
          summarizerCalls: event.summarizerCalls,
        },
      };
    case 'delegate_start':
      return { event: 'delegate_start', data: { role: event.role, agentId: event.agentId, runId: event.runId } };
    case 'delegate_end':
      return { event: 'delegate_end', data: { runId: event.runId, status: event.status } };
    case 'child': {
      const inner = toSseFrame(event.event, logger);
      return inner ? { event: 'child', data: { type: 'child', runId: event.runId, event: { type: inner.event, ...asObject(inner.data) } } } : undefined;
    }
    case 'done':
      return { event: 'done', data: event.reply };
    case 'paused':
      // Named by what the run waits for, so a client can switch on the event alone.
      return { event: event.reply.status, data: event.reply };
    case 'error': {
      // Headers are long gone, so the status travels in the event next to the usual error body.
      const described = errorReplyFor(event.error);
      if (described.status === 500) logger.error({ err: event.error }, 'chat stream failed');
      return { event: 'error', data: { status: described.status, ...described.body } };
    }
  }
}

function asObject(data: unknown): Record<string, unknown> {
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : { data };
}

/** A document's passage is read by the extractive answer; the client has the chunk, and the document. */
function withoutPassage(source: Source): Source {
  if (source.kind !== 'document' || !source.passage) return source;
  const { passage: _passage, ...rest } = source;
  return rest;
}

/** Writes frames in order (writes are async, events arrive synchronously) and stops once the client is gone. */
function frameWriter(stream: SSEStreamingApi, logger: Logger) {
  let writes = Promise.resolve();
  const write = (seq: number, event: ChatEvent) => {
    const frame = toSseFrame(event, logger);
    if (!frame) return;
    writes = writes.then(() => (stream.aborted ? undefined : stream.writeSSE({ id: String(seq), event: frame.event, data: JSON.stringify(frame.data) })));
  };
  return { write, drained: () => writes };
}

/**
 * Streams a turn (a new one, or a resumed run) as Server-Sent Events with ids. A client that
 * disconnects does not stop the run at once: it may reconnect to `GET /v1/runs/:id/events` with
 * `Last-Event-ID` for a grace period, after which a run nobody listens to is aborted.
 */
export function streamTurn(c: Context, logger: Logger, run: (listener: ChatListener) => Promise<TurnReply>): Response {
  return streamSSE(
    c,
    heldUntilDone(c, async (stream: SSEStreamingApi) => {
      const gone = new AbortController();
      const leave = () => gone.abort();
      stream.onAbort(leave);
      c.req.raw.signal.addEventListener('abort', leave, { once: true });
      const writer = frameWriter(stream, logger);
      try {
        await run({ stream: true, gone: gone.signal, onEvent: (event, seq) => writer.write(seq, event) });
      } catch {
        // Already sent as an `error` event (or nobody is listening any more).
      } finally {
        c.req.raw.signal.removeEventListener('abort', leave);
        await writer.drained();
      }
    }),
  );
}

/** Replays a live run's events after `after`, then follows it to its end (or until the client leaves). */
export function streamLiveRun(c: Context, logger: Logger, live: LiveRun<ChatEvent>, after: number | undefined): Response {
  return streamSSE(c, async (stream) => {
    const gone = new AbortController();
    const writer = frameWriter(stream, logger);
    const ended = new Promise<void>((resolve) => {
      const leave = () => {
        gone.abort();
        resolve();
      };
      stream.onAbort(leave);
      c.req.raw.signal.addEventListener('abort', leave, { once: true });
      live.listen({ onEvent: (seq, event) => writer.write(seq, event), onEnd: resolve, gone: gone.signal, after });
    });
    await ended;
    await writer.drained();
  });
}
