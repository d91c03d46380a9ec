import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';

describe('LLM_PROVIDERS', () => {
  it('is none when unset', () => {
    expect(loadConfig({}).LLM_PROVIDERS).toEqual({});
  });

  it('reads named OpenAI-compatible endpoints, the key optional', () => {
    const config = loadConfig({
      LLM_PROVIDERS: '{"local": {"baseURL": "http://127.0.0.1:11434/v1"}, "openai": {"baseURL": "https://api.openai.com/v1", "apiKey": "sk-x"}}',
    });
    expect(config.LLM_PROVIDERS).toEqual({
      local: { baseURL: 'http://127.0.0.1:11434/v1' },
      openai: { baseURL: 'https://api.openai.com/v1', apiKey: 'sk-x' },
    });
  });

  it.each([
    ['not JSON', 'not json'],
    ['a provider without a base URL', '{"local": {}}'],
    ['a base URL that is not one', '{"local": {"baseURL": "localhost"}}'],
    ['an unknown field', '{"local": {"baseURL": "http://x", "model": "m"}}'],
    ['a list', '[{"baseURL": "http://x"}]'],
  ])('refuses %s, naming LLM_PROVIDERS', (_what, value) => {
    let error: unknown;
    try {
      loadConfig({ LLM_PROVIDERS: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toEqual(['LLM_PROVIDERS']);
    expect((error as Error).message).toMatch(/LLM_PROVIDERS/);
  });
});
