import type { Config } from '../config/config.js';
import { OPENAI_BASE_URL } from './llm-from-config.js';

/** A provider as the API lists it: never its key. */
export interface ProviderInfo {
  /** `default` for LLM_BASE_URL's (or OpenAI's, with LLM_API_KEY alone); the others LLM_PROVIDERS' names. */
  name: string;
  baseURL: string;
  /** The model an agent naming none is given (LLM_MODEL); null when none is configured. */
  defaultModel: string | null;
}

/** One model a provider's `/models` route offers. */
export interface ProviderModel {
  id: string;
  ownedBy: string | null;
  /** Unix seconds, as the provider says; null when it does not. */
  created: number | null;
}

export interface ProviderModelList {
  provider: string;
  models: ProviderModel[];
  /** When the provider was asked: the list is kept for a few minutes. */
  fetchedAt: string;
}

/** The provider could not be asked, or its answer was not a model list. */
export class ProviderUnavailableError extends Error {
  constructor(
    readonly provider: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderUnavailableError';
  }
}

interface ConfiguredProvider extends ProviderInfo {
  apiKey: string | undefined;
}

/** The providers of a deployment: the default one when LLM_BASE_URL or LLM_API_KEY says where, then LLM_PROVIDERS. */
export function configuredProviders(config: Pick<Config, 'LLM_BASE_URL' | 'LLM_API_KEY' | 'LLM_MODEL' | 'LLM_PROVIDERS'>): ConfiguredProvider[] {
  const defaultModel = config.LLM_MODEL ?? null;
  const providers: ConfiguredProvider[] = [];
  if (config.LLM_BASE_URL || config.LLM_API_KEY) {
    providers.push({ name: 'default', baseURL: config.LLM_BASE_URL ?? OPENAI_BASE_URL, defaultModel, apiKey: config.LLM_API_KEY });
  }
  for (const [name, entry] of Object.entries(config.LLM_PROVIDERS)) {
    // An LLM_PROVIDERS entry named `default` cannot be chosen apart from LLM_BASE_URL's: that one is listed.
    if (name === 'default' && providers.length > 0) continue;
    providers.push({ name, baseURL: entry.baseURL, defaultModel, apiKey: entry.apiKey });
  }
  return providers;
}

export interface ProviderModelsOptions {
  providers: ConfiguredProvider[];
  /** How long a provider's list is kept (default five minutes). */
  ttlMs?: number;
  /** How long the provider may take to answer. */
  timeoutMs: number;
  fetch?: typeof fetch;
  now?: () => number;
}

export interface ProviderModels {
  list(): ProviderInfo[];
  /** Whether a provider has that name. */
  has(name: string): boolean;
  /** The models `name` offers, from its `/models` route; throws ProviderUnavailableError when it cannot tell. */
  models(name: string): Promise<ProviderModelList>;
}

const TTL_MS_DEFAULT = 5 * 60_000;

/**
 * The configured providers and the models each offers. A provider's list is asked once per
 * `ttlMs` (requests meanwhile share one call); a failure is not kept, so the next request asks again.
 */
export function createProviderModels(options: ProviderModelsOptions): ProviderModels {
  const byName = new Map(options.providers.map((p) => [p.name, p]));
  const ttlMs = options.ttlMs ?? TTL_MS_DEFAULT;
  const now = options.now ?? Date.now;
  const doFetch = options.fetch ?? fetch;
  const cache = new Map<string, { at: number; list: Promise<ProviderModelList> }>();

  async function ask(provider: ConfiguredProvider): Promise<ProviderModelList> {
    const url = `${provider.baseURL.replace(/\/+$/, '')}/models`;
    let response: Response;
    try {
      response = await doFetch(url, {
        headers: { accept: 'application/json', ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}) },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      throw new ProviderUnavailableError(provider.name, `Provider ${JSON.stringify(provider.name)} could not be reached: ${(error as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new ProviderUnavailableError(provider.name, `Provider ${JSON.stringify(provider.name)} answered ${response.status} to GET /models`);
    }
    const body = (await response.json().catch(() => undefined)) as { data?: unknown } | undefined;
    if (!body || !Array.isArray(body.data)) {
      throw new ProviderUnavailableError(provider.name, `Provider ${JSON.stringify(provider.name)} did not answer GET /models with a model list`);
    }
    const models = body.data.filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null && typeof m.id === 'string').map(toModel);
    return { provider: provider.name, models, fetchedAt: new Date(now()).toISOString() };
  }

  return {
    list: () => options.providers.map(({ apiKey: _key, ...info }) => info),
    has: (name) => byName.has(name),
    models(name) {
      const provider = byName.get(name);
      if (!provider) return Promise.reject(new Error(`No provider ${JSON.stringify(name)}`));
      const cached = cache.get(name);
      if (cached && now() - cached.at < ttlMs) return cached.list;
      const list = ask(provider);
      const entry = { at: now(), list };
      cache.set(name, entry);
      list.catch(() => {
        if (cache.get(name) === entry) cache.delete(name);
      });
      return list;
    },
  };
}

function toModel(m: Record<string, unknown>): ProviderModel {
  return {
    id: m.id as string,
    ownedBy: typeof m.owned_by === 'string' ? m.owned_by : null,
    created: typeof m.created === 'number' ? m.created : null,
  };
}
