import { type LlmProvider, createLlmProvider } from './llm-provider.js';
import type { Config } from '../config/config.js';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
// The openai client refuses to start without a key; local servers (Ollama, llama.cpp) ignore it.
export const PLACEHOLDER_API_KEY = 'not-needed';

/**
 * The configured LLM, or undefined when there is none: a model plus somewhere to send it (a base
 * URL, or an API key for OpenAI itself). Half a configuration is treated as none, and the chat
 * falls back to extractive answers rather than failing every request.
 */
export function llmProviderFromConfig(config: Config): LlmProvider | undefined {
  const { LLM_BASE_URL, LLM_API_KEY, LLM_MODEL, LLM_TIMEOUT_MS, LLM_MAX_ATTEMPTS, LLM_RETRY_BASE_MS, LLM_RETRY_MAX_MS } = config;
  if (!LLM_MODEL || (!LLM_BASE_URL && !LLM_API_KEY)) return undefined;
  return createLlmProvider({
    baseURL: LLM_BASE_URL ?? OPENAI_BASE_URL,
    apiKey: LLM_API_KEY ?? PLACEHOLDER_API_KEY,
    model: LLM_MODEL,
    timeoutMs: LLM_TIMEOUT_MS,
    maxTokensParam: config.LLM_MAX_TOKENS_PARAM,
    retry: { maxAttempts: LLM_MAX_ATTEMPTS, baseDelayMs: LLM_RETRY_BASE_MS, maxDelayMs: Math.max(LLM_RETRY_BASE_MS, LLM_RETRY_MAX_MS) },
  });
}
