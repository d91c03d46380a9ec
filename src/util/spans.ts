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

/** Marks `span` failed by `err`: the exception recorded, the status an error, `error.type` its class. */
export function failSpan(span: Span, err: unknown): void {
  if (!span.isRecording()) return;
  if (err instanceof Error) {
    span.recordException(err);
    span.setAttribute('error.type', err.name);
  } else {
    span.recordException(String(err));
    span.setAttribute('error.type', '_OTHER');
  }
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}
