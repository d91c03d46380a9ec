import { describe, expect, it } from 'vitest';
import { apiKeyScopesSchema, parseScopeList, storedScopes } from '../../src/auth/api-key-scopes.js';
import { chooseKeysTarget, localUrl } from '../../src/auth/keys-target.js';

describe('API key scopes', () => {
  it('reads --scopes as a list, each once, in a fixed order', () => {
    expect(parseScopeList('write, read')).toEqual({ scopes: ['read', 'write'] });
    expect(parseScopeList('admin,admin')).toEqual({ scopes: ['admin'] });
    expect(parseScopeList('read,owner,root')).toEqual({ problem: expect.stringContaining('unknown scope "owner", "root"') });
    expect(parseScopeList(',')).toEqual({ problem: expect.stringContaining('one or more of read, write, admin') });
  });

  it('validates the scopes of a request body', () => {
    expect(apiKeyScopesSchema.parse(['admin', 'read'])).toEqual(['read', 'admin']);
    for (const bad of [[], ['read', 'read'], ['owner'], 'read']) expect(apiKeyScopesSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });

  it('grants nothing for a stored scope it does not know', () => {
    expect(storedScopes(['read', 'superuser'])).toEqual(['read']);
  });
});

describe('where npm run keys works', () => {
  const base = { dataDir: './data', host: '127.0.0.1', port: 3000, directoryInUse: () => false, serverAnswers: async () => false };

  it('goes through MEMRAG_URL when it is set, with MEMRAG_API_KEY', async () => {
    expect(await chooseKeysTarget({ ...base, serverUrl: 'http://memrag:3000', apiKey: 'k', databaseUrl: 'postgres://x' })).toEqual({
      kind: 'server',
      baseUrl: 'http://memrag:3000',
      apiKey: 'k',
    });
  });

  it('writes a PostgreSQL database, and an embedded store nobody holds', async () => {
    expect(await chooseKeysTarget({ ...base, databaseUrl: 'postgres://x', directoryInUse: () => true })).toEqual({ kind: 'database' });
    expect(await chooseKeysTarget(base)).toEqual({ kind: 'database' });
  });

  it('goes through the server holding the embedded store, or refuses when none answers', async () => {
    const held = { ...base, directoryInUse: () => true };
    const asked: string[] = [];
    const answering = { ...held, host: '0.0.0.0', port: 8080, serverAnswers: async (url: string) => (asked.push(url), true) };
    expect(await chooseKeysTarget(answering)).toEqual({ kind: 'server', baseUrl: 'http://127.0.0.1:8080' });
    expect(asked).toEqual(['http://127.0.0.1:8080']);
    const refused = await chooseKeysTarget(held);
    expect(refused).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(/held by another process.*No memrag server answers at http:\/\/127\.0\.0\.1:3000/s),
    });
  });

  it('refuses an in-memory store, where a key would vanish', async () => {
    expect(await chooseKeysTarget({ ...base, dataDir: 'memory://' })).toMatchObject({ kind: 'refused', message: expect.stringContaining('memory://') });
  });

  it('reaches a server by its configured address', () => {
    expect(localUrl('::', 3000)).toBe('http://127.0.0.1:3000');
    expect(localUrl('::1', 3000)).toBe('http://[::1]:3000');
    expect(localUrl('localhost', 80)).toBe('http://localhost:80');
  });
});
