import { type LlmProvider, createLlmProvider } from './llm-provider.js';
import type { Config } from '../config/config.js';
import { PLACEHOLDER_API_KEY, llmProviderFromConfig } from './llm-from-config.js';

/** An agent names a provider LLM_PROVIDERS does not have (it was removed after the agent was saved). */
export class UnknownLlmProviderError extends Error {
  constructor(readonly provider: string) {
    super(`LLM provider ${JSON.stringify(provider)} is not in LLM_PROVIDERS`);
    this.name = 'UnknownLlmProviderError';
  }
}

/** What an agent's settings may choose of its model; unset fields are the deployment's. */
export interface LlmChoice {
  provider?: string;
  model?: string;
  temperature?: number;
}

/** Distinct (provider, model, temperature) choices kept built; past it the least recently used goes. */
const CACHED_PROVIDERS = 64;

/**
 * The model an agent's settings ask for: the deployment's own (`base`) when they name none; the
 * same endpoint with another model or temperature; or one of LLM_PROVIDERS. Built once per
 * distinct choice, within a bound: a provider holds an HTTP client, and a tenant may make agents
 * with as many model names as it likes.
 */
export function createAgentLlmResolver(
  config: Config,
  base: LlmProvider | undefined,
  /** Wraps each provider built here as `base` was wrapped (metrics). */
  wrap: (provider: LlmProvider) => LlmProvider = (provider) => provider,
): (settings: LlmChoice | null) => LlmProvider | undefined {
  const cache = new Map<string, LlmProvider | undefined>();
  return (settings) => {
    if (!settings || (settings.model === undefined && settings.provider === undefined && settings.temperature === undefined)) return base;
    const key = JSON.stringify([settings.provider ?? null, settings.model ?? null, settings.temperature ?? null]);
    if (cache.has(key)) {
      const cached = cache.get(key);
      // Moved to the end: Map keeps insertion order, so the first key is the least recently used.
      cache.delete(key);
      cache.set(key, cached);
      return cached;
    }
    const provider = resolve(config, base, settings, wrap);
    cache.set(key, provider);
    if (cache.size > CACHED_PROVIDERS) cache.delete(cache.keys().next().value!);
    return provider;
  };
}

function resolve(config: Config, base: LlmProvider | undefined, settings: LlmChoice, wrap: (provider: LlmProvider) => LlmProvider): LlmProvider | undefined {
  const { model, temperature } = settings;
  if (settings.provider !== undefined) {
    const entry = Object.hasOwn(config.LLM_PROVIDERS, settings.provider) ? config.LLM_PROVIDERS[settings.provider] : undefined;
    if (!entry) throw new UnknownLlmProviderError(settings.provider);
    const name = model ?? config.LLM_MODEL;
    // A provider without a model to ask has nothing to answer with: the turn is extractive.
    if (name === undefined) return undefined;
    return wrap(
      createLlmProvider({
        baseURL: entry.baseURL,
        apiKey: entry.apiKey ?? PLACEHOLDER_API_KEY,
        model: name,
        temperature,
        timeoutMs: config.LLM_TIMEOUT_MS,
        maxTokensParam: entry.maxTokensParam ?? config.LLM_MAX_TOKENS_PARAM,
        retry: {
          maxAttempts: config.LLM_MAX_ATTEMPTS,
          baseDelayMs: config.LLM_RETRY_BASE_MS,
          maxDelayMs: Math.max(config.LLM_RETRY_BASE_MS, config.LLM_RETRY_MAX_MS),
        },
      }),
    );
  }
  if (base) return base.withOptions ? base.withOptions({ model, temperature }) : base;
  // No deployment model, but an endpoint to send the agent's model to.
  const configured = model === undefined ? undefined : llmProviderFromConfig({ ...config, LLM_MODEL: model });
  return configured && wrap(temperature === undefined || !configured.withOptions ? configured : configured.withOptions({ temperature }));
}
