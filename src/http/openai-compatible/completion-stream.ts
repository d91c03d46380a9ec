import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import type { ChatEvent, ChatListener, TurnReply } from '../../chat/chat-service.js';
import type { Logger } from '../../observability/logger.js';
import { errorReplyFor } from '../../api/error-mapping.js';
import { type CompletionIdentity, approvalNotice, chunkOf, finishReasonOf, memragField, usageOf } from './completion-reply.js';
import { heldUntilDone } from '../middleware/tenant-admission.js';
import { openAiErrorOf } from './openai-error.js';

export interface CompletionStreamOptions {
  identity: CompletionIdentity;
  /** `stream_options.include_usage`: a last chunk with no choices and the usage. */
  includeUsage: boolean;
  /** The model's reasoning as `delta.reasoning_content` chunks as it comes (never in `content`). */
  includeReasoning?: boolean;
  /** The thread key of the reply as streamed (`RunListener.threadKeyOf`), its text being what the client holds. */
  threadKeyOf(reply: TurnReply, streamedText: string): string | undefined;
}

/**
 * A turn streamed as OpenAI streams a completion: `data:` frames of `chat.completion.chunk`
 * (the role first, then the text as it comes, with the reasoning's chunks when asked, then the finish reason with memrag's field), the
 * usage when asked, and `data: [DONE]`. A failure after the headers is an `error` frame, as
 * OpenAI sends it. The built-in tools run on the server and are not shown.
 */
export function streamCompletion(c: Context, logger: Logger, options: CompletionStreamOptions, run: (listener: ChatListener) => Promise<TurnReply>): Response {
  const { identity } = options;
  return streamSSE(
    c,
    heldUntilDone(c, async (stream: SSEStreamingApi) => {
      const gone = new AbortController();
      const leave = () => gone.abort();
      stream.onAbort(leave);
      c.req.raw.signal.addEventListener('abort', leave, { once: true });
      let writes = Promise.resolve();
      const send = (data: unknown) => {
        writes = writes.then(() => (stream.aborted ? undefined : stream.writeSSE({ data: typeof data === 'string' ? data : JSON.stringify(data) })));
      };
      let streamed = '';
      const onEvent = (event: ChatEvent) => {
        if (event.type === 'thinking' && options.includeReasoning && event.text !== '') send(chunkOf(identity, { reasoning_content: event.text }));
        if (event.type !== 'delta' || event.text === '') return;
        streamed += event.text;
        send(chunkOf(identity, { content: event.text }));
      };
      send(chunkOf(identity, { role: 'assistant', content: '' }));
      try {
        const reply = await run({ stream: true, gone: gone.signal, onEvent, threadKeyOf: (done) => options.threadKeyOf(done, streamed) });
        if (reply.status === 'requires_action') {
          const calls = reply.requiredAction?.toolCalls ?? [];
          send(chunkOf(identity, { tool_calls: calls.map((call, index) => ({ index, ...call })) }));
        } else if (reply.status === 'requires_approval') {
          send(chunkOf(identity, { content: approvalNotice(reply.runId) }));
        }
        send({ ...chunkOf(identity, {}, finishReasonOf(reply)), memrag: memragField(reply) });
        if (options.includeUsage) send({ ...identity, object: 'chat.completion.chunk', choices: [], usage: usageOf(reply) });
        send('[DONE]');
      } catch (error) {
        const described = errorReplyFor(error);
        if (described.status === 500) logger.error({ err: error }, 'completion stream failed');
        send(openAiErrorOf(described.status, described.body));
      } finally {
        c.req.raw.signal.removeEventListener('abort', leave);
        await writes;
      }
    }),
  );
}
