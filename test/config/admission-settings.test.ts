import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, tenantMaxConcurrent } from '../../src/config/config.js';

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('TENANT_MAX_CONCURRENT', () => {
  it("is half of MAX_CONCURRENT_REQUESTS when unset, at least one, and none when the server's limit is off", () => {
    expect(tenantMaxConcurrent(loadConfig({}))).toBe(32);
    expect(tenantMaxConcurrent(loadConfig({ MAX_CONCURRENT_REQUESTS: '9' }))).toBe(4);
    expect(tenantMaxConcurrent(loadConfig({ MAX_CONCURRENT_REQUESTS: '1' }))).toBe(1);
    expect(tenantMaxConcurrent(loadConfig({ MAX_CONCURRENT_REQUESTS: '0' }))).toBe(0);
  });

  it('takes a figure up to MAX_CONCURRENT_REQUESTS, and 0 for no share', () => {
    expect(tenantMaxConcurrent(loadConfig({ TENANT_MAX_CONCURRENT: '64' }))).toBe(64);
    expect(tenantMaxConcurrent(loadConfig({ TENANT_MAX_CONCURRENT: '0' }))).toBe(0);
    expect(tenantMaxConcurrent(loadConfig({ MAX_CONCURRENT_REQUESTS: '0', TENANT_MAX_CONCURRENT: '8' }))).toBe(8);
  });

  it.each([
    [{ TENANT_MAX_CONCURRENT: '-1' }],
    [{ TENANT_MAX_CONCURRENT: '2.5' }],
    [{ TENANT_MAX_CONCURRENT: 'half' }],
    [{ TENANT_MAX_CONCURRENT: '65' }],
    [{ MAX_CONCURRENT_REQUESTS: '8', TENANT_MAX_CONCURRENT: '9' }],
  ])('refuses %o, naming TENANT_MAX_CONCURRENT', (env) => {
    const error = refusal(env);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toEqual(['TENANT_MAX_CONCURRENT']);
    expect((error as ConfigError).message).toContain('TENANT_MAX_CONCURRENT');
  });
});

describe('RATE_LIMIT_PER_MINUTE', () => {
  it('is on by default, at 12,000 a minute with a minute as its burst; 0 turns it off', () => {
    const config = loadConfig({});
    expect(config.RATE_LIMIT_PER_MINUTE).toBe(12_000);
    expect(config.RATE_LIMIT_BURST).toBeUndefined();
    expect(loadConfig({ RATE_LIMIT_PER_MINUTE: '0' }).RATE_LIMIT_PER_MINUTE).toBe(0);
  });

  it.each(['-1', '1.5', 'lots', '1000001'])('refuses RATE_LIMIT_PER_MINUTE=%s, naming it', (value) => {
    const error = refusal({ RATE_LIMIT_PER_MINUTE: value });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toEqual(['RATE_LIMIT_PER_MINUTE']);
  });
});
