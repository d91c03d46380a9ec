import { type Attributes, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';

/** The instrumentation scope of every span memrag makes. */
export const TRACER_NAME = 'memrag';

/**
 * memrag's tracer. Through `@opentelemetry/api` only: until a provider is registered (see
 * observability/otel-setup.ts) it is the API's no-op tracer, whose spans record nothing.
 */
export function tracer(): Tracer {
  // Asked each time rather than kept: a provider registered later (or by a test) is the one used.
  return trace.getTracer(TRACER_NAME);
}

export interface SpanSettings {
  kind?: SpanKind;
  /** Starts a trace of its own rather than a child of the active span (a job, which outlives what queued it). */
  root?: boolean;
}

/**
 * Runs `fn` inside a span that is the active one meanwhile (spans started under it are its
 * children), then ends it. A throw is recorded on the span as an exception with an error
 * status, and thrown on. Whatever else `fn` learns (row counts, tokens) it sets on `span`.
 */
export async function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T> | T, settings: SpanSettings = {}): Promise<T> {
  return tracer().startActiveSpan(name, { attributes, kind: settings.kind ?? SpanKind.INTERNAL, ...(settings.root ? { root: true } : {}) }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Marks `span` failed by `err`: an exception event with the error's class and stack, the status an
 * error, `error.type` its class. The message is left out: errors quote what they failed on (a
 * duplicate key's value, a line of a user's file), and spans must carry no content. The log line
 * of the failure has it, under the same request id, which is the trace id.
 */
export function failSpan(span: Span, err: unknown): void {
  recordFailure(span, err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorType(err) });
}

/** Records `err` on `span` as failSpan does, its class and stack without its message, leaving the status as it is. */
export function recordFailure(span: Span, err: unknown): void {
  if (!span.isRecording()) return;
  const type = errorType(err);
  span.recordException({ name: type, message: type, ...(err instanceof Error && err.stack ? { stack: withoutMessage(err) } : {}) });
  span.setAttribute('error.type', type);
}

const errorType = (err: unknown) => (err instanceof Error ? err.name : '_OTHER');

/** The stack's frames, without its first line (which repeats the message). */
const withoutMessage = (err: Error) => [err.name, ...(err.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line))].join('\n');
