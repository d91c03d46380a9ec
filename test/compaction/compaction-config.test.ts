import { describe, expect, it } from 'vitest';
import { DEFAULT_COMPACTION_SETTINGS, assertCompactionConfig, compactionSettingsFor } from '../../src/compaction/compaction-config.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';

describe('compaction configuration', () => {
  it('defaults to an 8k window, 1k reserve, 0.85 trigger and 8 recent messages', () => {
    const config = loadConfig({});
    expect(compactionSettingsFor(config, undefined)).toEqual(DEFAULT_COMPACTION_SETTINGS);
    expect(compactionSettingsFor(config, 'any-model')).toEqual(DEFAULT_COMPACTION_SETTINGS);
  });

  it('takes deployment settings from the environment and per-model ones from COMPACTION_MODELS', () => {
    const config = loadConfig({
      CONTEXT_WINDOW_TOKENS: '32000',
      CONTEXT_OUTPUT_RESERVE_TOKENS: '2000',
      COMPACTION_TRIGGER_SHARE: '0.7',
      COMPACTION_RECENT_MESSAGES: '12',
      COMPACTION_MODELS: '{"gpt-4o-mini":{"contextWindow":128000,"outputReserve":4096},"__proto__":{"recentMessages":2}}',
    });
    expect(compactionSettingsFor(config, 'llama3')).toEqual({ contextWindow: 32000, outputReserve: 2000, triggerShare: 0.7, recentMessages: 12 });
    expect(compactionSettingsFor(config, 'gpt-4o-mini')).toEqual({ contextWindow: 128000, outputReserve: 4096, triggerShare: 0.7, recentMessages: 12 });
    expect(compactionSettingsFor(config, '__proto__').recentMessages).toBe(2);
    expect(compactionSettingsFor(config, 'constructor').recentMessages).toBe(12);
  });

  it('names the variable of a bad value', () => {
    const variables = (env: Record<string, string>) => {
      try {
        assertCompactionConfig(loadConfig(env));
        return [];
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as ConfigError).variables;
      }
    };
    expect(variables({ COMPACTION_MODELS: '{not json' })).toEqual(['COMPACTION_MODELS']);
    expect(variables({ COMPACTION_MODELS: '{"m":{"contextWindow":"big"}}' })).toEqual(['COMPACTION_MODELS']);
    expect(variables({ COMPACTION_MODELS: '{"m":{"window":8000}}' })).toEqual(['COMPACTION_MODELS']);
    expect(variables({ COMPACTION_TRIGGER_SHARE: '1.5' })).toEqual(['COMPACTION_TRIGGER_SHARE']);
    expect(variables({ CONTEXT_WINDOW_TOKENS: '2000', CONTEXT_OUTPUT_RESERVE_TOKENS: '1900' })).toEqual([
      'CONTEXT_WINDOW_TOKENS',
      'CONTEXT_OUTPUT_RESERVE_TOKENS',
    ]);
    expect(variables({ COMPACTION_MODELS: '{"tiny":{"contextWindow":1000}}' })).toEqual(['COMPACTION_MODELS']);
    expect(variables({ COMPACTION_MODELS: '{"ok":{"contextWindow":4000}}' })).toEqual([]);
  });
});
