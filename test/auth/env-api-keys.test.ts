import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/api-key-secret.js';
import { parseEnvApiKeys } from '../../src/auth/env-api-keys.js';

describe('API_KEYS entries', () => {
  it('reads tenant:key and bare keys (tenant default), split at the first colon', () => {
    expect(parseEnvApiKeys(' plain , acme:k1, acme:k:2,, beta.eu-1:x ')).toEqual({
      keys: [
        { tenantId: 'default', keyHash: hashApiKey('plain') },
        { tenantId: 'acme', keyHash: hashApiKey('k1') },
        { tenantId: 'acme', keyHash: hashApiKey('k:2') },
        { tenantId: 'beta.eu-1', keyHash: hashApiKey('x') },
      ],
      problems: [],
    });
    expect(parseEnvApiKeys(undefined)).toEqual({ keys: [], problems: [] });
  });

  it('names bad entries by position, never by their text', () => {
    const { keys, problems } = parseEnvApiKeys('ok, :secret-a, bad/tenant:secret-b, acme:');
    expect(keys).toHaveLength(1);
    expect(problems).toEqual([
      expect.stringMatching(/^entry 2: the tenant /),
      expect.stringMatching(/^entry 3: the tenant may contain only/),
      'entry 4: the key is empty (expected tenant:key or key)',
    ]);
    expect(problems.join(' ')).not.toMatch(/secret/);
  });
});
