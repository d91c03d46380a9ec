import { z } from 'zod';
import { compactionModelsEnv } from './compaction-models.js';
import { ConfigError } from './config-error.js';
import { parseEnvApiKeys } from './env-api-keys.js';
import { RERANKERS } from './reranker-choice.js';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

const optionalUrl = z.string().url().optional();

/** A variable holding JSON (an empty object when unset); `example` shows its shape when it is not JSON. */
const jsonVariable = (example: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return {};
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be JSON: ${example}` });
        return z.NEVER;
      }
    });

/**
 * Every environment variable the server reads, with its default. Documented in docs/operations.md,
 * "Configuration" (a variable added here belongs in its table).
 */
export const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  // How long a query waits for a database connection before answering 503 (see src/db/database.ts).
  // Connections to the server: searches get their own while a tenant's writers queue in the process (see docs/operations.md).
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(1_000).default(10),
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  // How long one statement may run before it fails as the database being unavailable (0: no bound).
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(15_000),
  DATA_DIR: z.string().min(1).default('./data'),
  // PGlite's buffer cache, resident in the process (default 32MB, see src/db/database.ts).
  PGLITE_SHARED_BUFFERS: z
    .string()
    .regex(/^\d+(kB|MB|GB)$/, 'a size such as 32MB')
    .optional(),
  // PGlite in a worker thread of its own, beside the one serving HTTP (see src/db/pglite-thread.ts).
  PGLITE_THREAD: bool.default(false),
  // Unset: the model the store was embedded with, USE lite for a new store (src/embeddings/store-default-provider.ts).
  EMBEDDING_PROVIDER: z.enum(['bundled', 'static', 'transformers', 'openai']).optional(),
  EMBEDDING_MODEL: z.string().min(1).optional(),
  EMBEDDING_DIMENSIONS: z.coerce.number().int().positive().optional(),
  EMBEDDING_CACHE_DIR: z.string().min(1).optional(),
  EMBEDDING_ALLOW_REMOTE: bool.default(false),
  EMBEDDING_WORKERS: z.coerce.number().int().min(0).max(64).optional(),
  EMBEDDING_BATCH_SIZE: z.coerce.number().int().min(1).max(1024).default(32),
  // The embedding workers' niceness on Linux (see src/embeddings/embedding-pool.ts).
  EMBEDDING_WORKER_NICENESS: z.coerce.number().int().min(0).max(19).default(0),
  EMBEDDING_BASE_URL: optionalUrl,
  EMBEDDING_API_KEY: z.string().optional(),
  LLM_BASE_URL: optionalUrl,
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().min(1).optional(),
  LLM_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  // Runs (src/runs): how long a paused run waits for the client, how long a streamed run waits
  // for a disconnected client to reconnect, and past how many tools the model gets a tool search.
  RUN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(3_600),
  RUN_RECONNECT_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(2_000),
  TOOL_SEARCH_THRESHOLD: z.coerce.number().int().min(0).max(10_000).default(20),
  // Conversation compaction (src/compaction): the model's window and how full a prompt may get.
  CONTEXT_WINDOW_TOKENS: z.coerce.number().int().min(256).max(100_000_000).default(8_192),
  CONTEXT_OUTPUT_RESERVE_TOKENS: z.coerce.number().int().min(0).max(100_000_000).default(1_024),
  COMPACTION_TRIGGER_SHARE: z.coerce.number().gt(0).max(1).default(0.85),
  COMPACTION_RECENT_MESSAGES: z.coerce.number().int().min(0).max(10_000).default(8),
  COMPACTION_MODELS: compactionModelsEnv,
  COMPACTION_SUMMARY_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
  COMPACTION_SETTLE_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(2_000),
  // Facts extracted from each chat turn into memories, in the background (needs an LLM; see src/memory/extraction).
  MEMORY_EXTRACTION: z.enum(['on', 'off']).default('on'),
  MEMORY_EXTRACTION_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  // Which memory writes are screened for injected instructions (src/memory/firewall): the model's
  // and extraction's (`model`), the API's too (`all`), or none (`off`).
  MEMORY_FIREWALL: z.enum(['model', 'all', 'off']).default('model'),
  // Borderline memory writes the screen cannot tell apart are put to the configured model (`llm`,
  // when there is one), which waits at most the timeout; `off` leaves them to the screen.
  MEMORY_FIREWALL_SECOND_OPINION: z.enum(['llm', 'off']).default('llm'),
  MEMORY_FIREWALL_SECOND_OPINION_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  LLM_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(4),
  LLM_RETRY_BASE_MS: z.coerce.number().int().min(0).max(600_000).default(500),
  LLM_RETRY_MAX_MS: z.coerce.number().int().min(0).max(600_000).default(20_000),
  // `cachedInputPerMTok`: what prompt tokens served from the provider's prefix cache cost (the input price when unset).
  LLM_PRICES: jsonVariable('{"<model>": {"inputPerMTok": n, "outputPerMTok": n, "cachedInputPerMTok": n}}').pipe(
    z.record(
      z.string().min(1),
      z.strictObject({ inputPerMTok: z.number().min(0), outputPerMTok: z.number().min(0), cachedInputPerMTok: z.number().min(0).optional() }),
    ),
  ),
  // The field an output limit (`sampling.maxTokens`) is sent as: OpenAI's reasoning models want `max_completion_tokens`.
  LLM_MAX_TOKENS_PARAM: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
  // Other OpenAI-compatible endpoints an agent may name as its `provider`; the default is LLM_BASE_URL's.
  LLM_PROVIDERS: jsonVariable('{"<name>": {"baseURL": "<url>", "apiKey": "<key>"}}').pipe(
    z.record(
      z.string().min(1),
      z.strictObject({
        baseURL: z.string().url(),
        apiKey: z.string().min(1).optional(),
        maxTokensParam: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
      }),
    ),
  ),
  // `tenant:key` or `key` entries, hashed here: the configuration never holds a key in clear.
  API_KEYS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const { keys, problems } = parseEnvApiKeys(v);
      for (const message of problems) ctx.addIssue({ code: 'custom', message });
      return keys;
    }),
  // How long a key lookup is trusted: a revoked key stops working within this time.
  API_KEY_CACHE_MS: z.coerce.number().int().min(0).max(300_000).default(5_000),
  // How often expired memories are deleted (with an `expired` event); they read as gone at once anyway.
  MEMORY_SWEEP_INTERVAL_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(60_000),
  MAX_BODY_BYTES: z.coerce.number().int().positive().default(1_048_576),
  MAX_TOP_K: z.coerce.number().int().min(1).max(10_000).default(100),
  // A chat message's images: the most bytes one may decode to, how many a message may carry, and
  // how many of a conversation's last turns have theirs sent to the model again.
  IMAGE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(100 * 1_048_576)
    .default(8 * 1_048_576),
  IMAGE_MAX_PER_MESSAGE: z.coerce.number().int().min(0).max(100).default(8),
  IMAGE_HISTORY_TURNS: z.coerce.number().int().min(0).max(1_000).default(2),
  MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(20 * 1_048_576),
  FUSION_VECTOR_WEIGHT: z.coerce.number().min(0).max(1000).optional(),
  FUSION_TEXT_WEIGHT: z.coerce.number().min(0).max(1000).optional(),
  // Cross-encoder models load through transformers.js with EMBEDDING_CACHE_DIR / EMBEDDING_ALLOW_REMOTE.
  RERANKER_MODEL: z.string().min(1).optional(),
  RERANKER_DEFAULT: z.enum(RERANKERS).default('none'),
  RERANKER_WORKERS: z.coerce.number().int().min(0).max(64).default(1),
  RERANKER_BATCH_SIZE: z.coerce.number().int().min(1).max(1024).default(16),
  RERANKER_MAX_TOKENS: z.coerce.number().int().min(8).max(65_536).optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  // OpenTelemetry (src/observability/otel-setup.ts): spans are exported over OTLP/HTTP when an
  // endpoint is set (the traces one as is, the general one with /v1/traces); unset: no tracing at all.
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  OTEL_SERVICE_NAME: z.string().min(1).default('memrag'),
  OTEL_SDK_DISABLED: bool.default(false),
  // 0 turns the timeout off; /v1/chat is never subject to it (see src/http/middleware/request-timeout.ts).
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  // Admission (src/http/middleware/concurrency-limit.ts): requests run at once, requests that may
  // wait, and for how long, before the answer is 503 with Retry-After. 0 requests at once: no limit.
  MAX_CONCURRENT_REQUESTS: z.coerce.number().int().min(0).max(100_000).default(64),
  MAX_QUEUED_REQUESTS: z.coerce.number().int().min(0).max(1_000_000).default(512),
  QUEUE_TIMEOUT_MS: z.coerce.number().int().min(1).max(3_600_000).default(10_000),
  // Requests one tenant may run at once (src/http/middleware/tenant-admission.ts); unset: half of
  // MAX_CONCURRENT_REQUESTS (see tenantMaxConcurrent), 0: no share.
  TENANT_MAX_CONCURRENT: z.coerce.number().int().min(0).max(100_000).optional(),
  // Per API key (per client address without one); 0 turns rate limiting off. The default, 200 a
  // second, is far above what one user's clients send (docs/operations.md, "Admission").
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(12_000),
  // Bucket size; unset means one minute's worth, so a client may spend its minute at once.
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).max(1_000_000).optional(),
  TRUST_PROXY: bool.default(false),
  CORS_ORIGINS: z
    .string()
    .optional()
    .transform((v, ctx) =>
      (v
        ? v
            .split(',')
            .map((o) => o.trim())
            .filter(Boolean)
        : []
      ).map((origin) => {
        const normalised = origin === '*' ? origin : originOf(origin);
        if (normalised === undefined) ctx.addIssue({ code: 'custom', message: `${origin} is not * or an origin like https://app.example.com` });
        return normalised ?? '';
      }),
    ),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
  // Durable jobs (src/jobs): the API server works on them too unless WORKERS_IN_PROCESS=false (then `npm run worker` does).
  WORKERS_IN_PROCESS: bool.default(true),
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  // A worker that stops renewing its lease this long (killed, hung) loses its job to another worker.
  JOB_LEASE_MS: z.coerce.number().int().min(300).max(3_600_000).default(30_000),
  JOB_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  JOB_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(3),
  JOB_RETRY_BASE_MS: z.coerce.number().int().min(0).max(600_000).default(1_000),
  // A synchronous POST /v1/documents larger than this is refused (413) with a pointer to `async: true`.
  SYNC_INGEST_MAX_BYTES: z.coerce.number().int().min(1).default(1_048_576),
  INGEST_ALLOW_PRIVATE_URLS: bool.default(false),
  INGEST_URL_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(20 * 1_048_576),
  INGEST_URL_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  INGEST_URL_MAX_REDIRECTS: z.coerce.number().int().min(0).max(20).default(5),
});

export type Config = z.infer<typeof envSchema>;

/** Browsers send `Origin` as scheme://host[:port] exactly; a path or trailing slash would never match. */
function originOf(value: string): string | undefined {
  try {
    const url = new URL(value);
    const bare = value.replace(/\/$/, '').toLowerCase();
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === bare ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

export { ConfigError };

/** Parses the environment; a bad value throws a ConfigError naming each offending variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings mean "unset" so that `FOO= npm start` falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const variables = [...new Set(parsed.error.issues.map((i) => String(i.path[0])))];
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0])}: ${i.message}`);
    throw new ConfigError(variables, `Invalid configuration:\n${lines.join('\n')}`);
  }
  const { TENANT_MAX_CONCURRENT: tenantMax, MAX_CONCURRENT_REQUESTS: serverMax } = parsed.data;
  if (tenantMax !== undefined && serverMax > 0 && tenantMax > serverMax) {
    throw new ConfigError(
      ['TENANT_MAX_CONCURRENT'],
      `Invalid configuration:\n  TENANT_MAX_CONCURRENT: ${tenantMax} is more than MAX_CONCURRENT_REQUESTS (${serverMax}): a tenant cannot run more than the server`,
    );
  }
  return parsed.data;
}

/** A tenant's share of the admission slots: TENANT_MAX_CONCURRENT, or half of the server's; 0: none. */
export function tenantMaxConcurrent(config: Pick<Config, 'TENANT_MAX_CONCURRENT' | 'MAX_CONCURRENT_REQUESTS'>): number {
  if (config.TENANT_MAX_CONCURRENT !== undefined) return config.TENANT_MAX_CONCURRENT;
  return config.MAX_CONCURRENT_REQUESTS > 0 ? Math.max(1, Math.floor(config.MAX_CONCURRENT_REQUESTS / 2)) : 0;
}
