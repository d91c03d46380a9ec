import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('PGLITE_SHARED_BUFFERS and EMBEDDING_WORKER_NICENESS', () => {
  it('leave the defaults when unset', () => {
    const config = loadConfig({});
    expect(config.PGLITE_SHARED_BUFFERS).toBeUndefined();
    expect(config.EMBEDDING_WORKER_NICENESS).toBe(0);
  });

  it('take a size and a niceness', () => {
    const config = loadConfig({ PGLITE_SHARED_BUFFERS: '64MB', EMBEDDING_WORKER_NICENESS: '10' });
    expect(config.PGLITE_SHARED_BUFFERS).toBe('64MB');
    expect(config.EMBEDDING_WORKER_NICENESS).toBe(10);
  });

  it.each([
    ['PGLITE_SHARED_BUFFERS', '32'],
    ['PGLITE_SHARED_BUFFERS', '32MB; DROP'],
    ['EMBEDDING_WORKER_NICENESS', '20'],
    ['EMBEDDING_WORKER_NICENESS', '-1'],
  ])('refuses %s=%s, naming it', (name, value) => {
    const error = refusal({ [name]: value });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toEqual([name]);
  });
});
