import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const optionalUrl = z.string().url().optional();

/** Every environment variable the server reads, with its default. Documented in the README. */
export const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  EMBEDDING_PROVIDER: z.enum(['bundled', 'transformers', 'openai']).default('bundled'),
  EMBEDDING_MODEL: z.string().min(1).optional(),
  EMBEDDING_DIMENSIONS: z.coerce.number().int().positive().optional(),
  EMBEDDING_CACHE_DIR: z.string().min(1).optional(),
  EMBEDDING_ALLOW_REMOTE: bool.default(false),
  EMBEDDING_WORKERS: z.coerce.number().int().min(0).max(64).optional(),
  EMBEDDING_BATCH_SIZE: z.coerce.number().int().min(1).max(1024).default(32),
  EMBEDDING_BASE_URL: optionalUrl,
  EMBEDDING_API_KEY: z.string().optional(),
  LLM_BASE_URL: optionalUrl,
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().min(1).optional(),
  LLM_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  LLM_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(4),
  LLM_RETRY_BASE_MS: z.coerce.number().int().min(0).max(600_000).default(500),
  LLM_RETRY_MAX_MS: z.coerce.number().int().min(0).max(600_000).default(20_000),
  LLM_PRICES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return {};
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON: {"<model>": {"inputPerMTok": n, "outputPerMTok": n}}' });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string().min(1), z.strictObject({ inputPerMTok: z.number().min(0), outputPerMTok: z.number().min(0) }))),
  API_KEYS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((k) => k.trim()).filter(Boolean) : [])),
  MAX_BODY_BYTES: z.coerce.number().int().positive().default(1_048_576),
  MAX_TOP_K: z.coerce.number().int().min(1).max(10_000).default(100),
  MAX_UPLOAD_BYTES: z.coerce.number().int().positive().default(20 * 1_048_576),
  FUSION_VECTOR_WEIGHT: z.coerce.number().min(0).max(1000).optional(),
  FUSION_TEXT_WEIGHT: z.coerce.number().min(0).max(1000).optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
});

export type Config = z.infer<typeof envSchema>;

export class ConfigError extends Error {
  constructor(readonly variables: string[], message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

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
  return parsed.data;
}
