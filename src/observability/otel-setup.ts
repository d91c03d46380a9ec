import type { Config } from '../config/config.js';
import type { Logger } from './logger.js';

export type TracingConfig = Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SERVICE_NAME' | 'OTEL_SDK_DISABLED'>;

export interface Tracing {
  /** Whether spans are exported (an OTLP endpoint is configured). */
  readonly enabled: boolean;
  /** Where they go; undefined when tracing is off. */
  readonly url: string | undefined;
  /** Exports the spans still buffered and stops: called last at shutdown. Does nothing when tracing is off. */
  shutdown(): Promise<void>;
}

const TRACING_OFF: Tracing = { enabled: false, url: undefined, shutdown: async () => {} };

/**
 * The URL spans are sent to: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
 * OTEL_EXPORTER_OTLP_ENDPOINT with the traces path (`/v1/traces`) appended, as the OTLP exporter
 * specification has it; undefined when neither is set (or OTEL_SDK_DISABLED).
 */
export function otlpTracesUrl(config: TracingConfig): string | undefined {
  if (config.OTEL_SDK_DISABLED) return undefined;
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/**
 * Registers the OpenTelemetry SDK as the API's global provider when an OTLP endpoint is
 * configured: spans batched and exported over OTLP/HTTP, the W3C trace context propagator (so a
 * request's `traceparent` is continued) and async-hooks context. Without an endpoint nothing is
 * registered, nor even loaded (the SDK is imported here, on demand): the API's spans stay no-ops.
 * Headers, timeouts and the sampler come from the exporter's and SDK's own variables
 * (OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER, ...).
 */
export async function startTracing(config: TracingConfig, logger: Logger): Promise<Tracing> {
  const url = otlpTracesUrl(config);
  if (!url) return TRACING_OFF;
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  // OTEL_RESOURCE_ATTRIBUTES (and OTEL_SERVICE_NAME, read there too) win over the default name.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': config.OTEL_SERVICE_NAME }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))] });
  provider.register();
  logger.info({ url, serviceName: config.OTEL_SERVICE_NAME }, `tracing: exporting spans over OTLP to ${url}`);
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    url,
    shutdown() {
      stopped ??= provider.shutdown().catch((err: unknown) => logger.warn({ err }, 'tracing: exporting the last spans failed'));
      return stopped;
    },
  };
}
