import { describe, expect, it } from 'vitest';
import { llmProviderFromConfig } from '../../src/chat/llm-from-config.js';
import { loadConfig } from '../../src/config/config.js';

describe('llmProviderFromConfig', () => {
  it('builds a provider from a model plus a base URL or an API key', () => {
    expect(llmProviderFromConfig(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_MODEL: 'llama3' }))?.model).toBe('llama3');
    expect(llmProviderFromConfig(loadConfig({ LLM_API_KEY: 'sk-x', LLM_MODEL: 'gpt-4o-mini' }))?.model).toBe('gpt-4o-mini');
  });

  it('is undefined when the configuration is missing or partial', () => {
    expect(llmProviderFromConfig(loadConfig({}))).toBeUndefined();
    expect(llmProviderFromConfig(loadConfig({ LLM_MODEL: 'm' }))).toBeUndefined();
    expect(llmProviderFromConfig(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:1/v1' }))).toBeUndefined();
  });
});
