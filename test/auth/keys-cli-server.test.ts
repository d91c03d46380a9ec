import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseUrlOf, isListening, type SpawnedServer, spawnServer, stopServers } from '../support/spawned-server.js';

/** `npm run keys` as an operator runs it beside a server, on the server's own configuration. */
function keysCli(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const { DATABASE_URL: _db, MEMRAG_URL: _url, MEMRAG_API_KEY: _key, API_KEYS: _keys, ...inherited } = process.env;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', ...args], {
      env: { ...inherited, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

// Issue 53: `keys create` beside a running server on the embedded store printed a key that never
// worked (the server still logged "apiKeys":false after a restart) and damaged the store.
describe('npm run keys while a server holds the embedded store', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'memrag-keys-server-'));
  const servers: SpawnedServer[] = [];
  const start = () => {
    const server = spawnServer({ name: 'main', script: 'src/main.ts', env: { DATA_DIR: dataDir, EMBEDDING_WORKERS: '0' }, ready: isListening });
    servers.push(server);
    return server;
  };
  afterAll(async () => {
    await stopServers(servers);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('makes the key through the server: it works at once, and after a restart', async () => {
    const first = start();
    const listening = await first.ready;
    expect(listening).toMatchObject({ apiKeys: false });
    const base = baseUrlOf(listening);
    const cliEnv = { DATA_DIR: dataDir, PORT: String(listening.port) };

    const created = await keysCli(['create', '--tenant', 'acme', '--name', 'ops', '--scopes', 'read,write,admin'], cliEnv);
    expect(created.status, created.stderr).toBe(0);
    expect(created.stderr).toContain(`Through the memrag server at ${base}.`);
    const key = created.stdout.trim();
    expect(key).toMatch(/^mrk_/);
    expect((await fetch(`${base}/v1/tags`)).status).toBe(401);
    expect((await fetch(`${base}/v1/tags`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    const unauthenticated = await keysCli(['list'], cliEnv);
    expect(unauthenticated.status).toBe(1);
    expect(unauthenticated.stderr).toMatch(/answered 401.*MEMRAG_API_KEY/s);
    const listed = await keysCli(['list'], { ...cliEnv, MEMRAG_API_KEY: key });
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/acme +mrk_\S+ +ops +read,write,admin /);

    await stopServers([first]);
    const second = start();
    expect(await second.ready).toMatchObject({ apiKeys: true });
    const again = baseUrlOf(await second.ready);
    expect((await fetch(`${again}/v1/tags`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  });
});
