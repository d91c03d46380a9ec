import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKeyAuthenticator } from '../../src/auth/api-key-authenticator.js';
import { listApiKeys } from '../../src/auth/api-key-store.js';
import { runKeysCli } from '../../src/auth/keys-cli.js';
import { dbKeysBackend } from '../../src/auth/keys-backend.js';
import { createPgAuditLog } from '../../src/audit/pg-audit-log.js';
import { type Database, openDatabase } from '../../src/db/database.js';

describe('npm run keys', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({});
  });
  afterAll(() => database.close());

  async function run(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runKeysCli(argv, dbKeysBackend(database.db), { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  }

  it('creates a key, printing it once on stdout, for its tenant', async () => {
    const created = await run('create', '--tenant', 'acme', '--name', 'ci deploys');
    expect(created.code).toBe(0);
    expect(created.out).toHaveLength(1);
    const [key] = created.out as [string];
    expect(key).toMatch(/^mrk_/);
    expect(created.err.join('\n')).toMatch(/for tenant acme \(ci deploys\), scopes read,write\.[\s\S]*shown this once/);
    const auth = createApiKeyAuthenticator({ db: database.db, envKeys: [], cacheTtlMs: 0 });
    expect(await auth.authenticate(key)).toMatchObject({ tenantId: 'acme', scopes: ['read', 'write'] });

    const listed = await run('list');
    expect(listed.code).toBe(0);
    expect(listed.out[0]).toMatch(/^ID +TENANT +PREFIX +NAME +SCOPES +CREATED +STATUS$/);
    expect(listed.out.find((l) => l.includes('ci deploys'))).toMatch(/ read,write /);
    expect(listed.out.join('\n')).toContain('ci deploys');
    expect(listed.out.join('\n')).toContain(key.slice(0, 12));
    // Never the key itself, nor its hash.
    expect(listed.out.join('\n')).not.toContain(key);
  });

  it('revokes by id or by prefix, refusing an ambiguous prefix', async () => {
    const [a] = (await run('create', '--tenant', 'beta')).out as [string];
    await run('create', '--tenant', 'beta');
    const keys = await listApiKeys(database.db);
    const record = keys.find((k) => a.startsWith(k.prefix))!;

    const ambiguous = await run('revoke', 'mrk_');
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.err[0]).toMatch(/keys start with "mrk_"; name one by id/);
    expect((await listApiKeys(database.db)).every((k) => k.revokedAt === null)).toBe(true);

    const byPrefix = await run('revoke', record.prefix);
    expect(byPrefix).toMatchObject({ code: 0, err: [expect.stringContaining(`Revoked key ${record.prefix}`), expect.stringContaining('5 s')] });
    const auth = createApiKeyAuthenticator({ db: database.db, envKeys: [], cacheTtlMs: 0 });
    expect(await auth.authenticate(a)).toBeNull();
    expect((await run('revoke', record.id)).err[0]).toMatch(/already revoked/);
    expect((await run('revoke', 'mrk_nothing-like-this')).code).toBe(1);
    expect((await run('list')).out.join('\n')).toMatch(/revoked \d{4}-/);
  });

  it('answers usage errors with exit code 2', async () => {
    for (const argv of [
      [],
      ['create'],
      ['create', '--tenant', 'bad tenant'],
      ['create', '--tenant', 'a', 'extra'],
      ['revoke'],
      ['frobnicate'],
      ['list', '--bogus'],
      ['create', '--tenant', 'a', '--scopes', 'read,owner'],
      ['create', '--tenant', 'a', '--scopes', ' , '],
      ['list', '--scopes', 'read'],
    ]) {
      const result = await run(...argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.err.join('\n')).toContain('Usage: npm run keys');
    }
    expect((await run('--help')).code).toBe(0);
  });

  it('creates a key with the scopes asked for, each once and in order', async () => {
    const [key] = (await run('create', '--tenant', 'gamma', '--scopes', 'admin, read,admin')).out as [string];
    const auth = createApiKeyAuthenticator({ db: database.db, envKeys: [], cacheTtlMs: 0 });
    expect((await auth.authenticate(key))?.scopes).toEqual(['read', 'admin']);
  });

  it("records each creation and revocation in the key tenant's audit log, never the secret", async () => {
    const [key] = (await run('create', '--tenant', 'delta', '--scopes', 'read')).out as [string];
    const record = (await listApiKeys(database.db)).find((k) => key.startsWith(k.prefix))!;
    expect((await run('revoke', record.id)).code).toBe(0);
    const entries = (await createPgAuditLog({ db: database.db, tenantId: 'delta' }).list()).items;
    expect(entries.map((e) => e.action)).toEqual(['key.revoked', 'key.created']);
    for (const entry of entries) {
      expect(entry.actor).toEqual({ type: 'command', command: 'keys' });
      expect(entry.details).toEqual({ keyId: record.id, prefix: record.prefix, scopes: ['read'] });
    }
    expect(JSON.stringify(entries)).not.toContain(key);
    expect((await createPgAuditLog({ db: database.db, tenantId: 'acme' }).list({ action: 'key.revoked' })).items).toEqual([]);
  });
});

describe('src/cli/keys.ts', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'memrag-keys-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs against DATA_DIR: the key on stdout alone, for a shell to capture', () => {
    const { DATABASE_URL: _url, ...env } = process.env;
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', ...args], { env: { ...env, DATA_DIR: dataDir }, encoding: 'utf8', timeout: 60_000 });
    const created = run('create', '--tenant', 'acme');
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^mrk_[A-Za-z0-9_-]{43}\n$/);
    expect(created.stderr).toContain('Running servers act on it within API_KEY_CACHE_MS');
    const listed = run('list');
    expect(listed.stdout).toContain(created.stdout.slice(0, 12));
  });

  // Two processes on one PGlite directory lose one's writes and damage the store: the CLI never opens a held one.
  it('refuses a DATA_DIR another process holds when no server answers, saying what to do', () => {
    const held = mkdtempSync(join(tmpdir(), 'memrag-keys-held-'));
    writeFileSync(join(held, 'postmaster.pid'), '-42\n');
    try {
      const { DATABASE_URL: _url, MEMRAG_URL: _server, ...env } = process.env;
      const refused = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', 'create', '--tenant', 'acme'], {
        // Port 1: nothing listens there.
        env: { ...env, DATA_DIR: held, PORT: '1' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(refused.status, refused.stderr).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(
        /is held by another process \(it has a postmaster\.pid\): a memrag server.*No memrag server answers at http:\/\/127\.0\.0\.1:1\..*MEMRAG_URL.*MEMRAG_API_KEY/s,
      );
      // Nothing was opened: PGlite would have made the directory a store.
      expect(existsSync(join(held, 'PG_VERSION'))).toBe(false);
    } finally {
      rmSync(held, { recursive: true, force: true });
    }
  });
});
