import { afterEach, describe, expect, it } from 'vitest';
import { isListening, type SpawnedServer, spawnServer } from './support/spawned-server.js';

/** `src/main.ts` as operators run it: embedded PGlite in memory, the bundled embedder in-process. */
function startMain(env: Record<string, string>): SpawnedServer {
  return spawnServer({ name: 'main', script: 'src/main.ts', env: { DATA_DIR: 'memory://', EMBEDDING_WORKERS: '0', ...env }, ready: isListening });
}

describe('main: API keys and the listening address', () => {
  let running: SpawnedServer | undefined;
  afterEach(() => {
    if (running && running.child.exitCode === null) running.child.kill('SIGKILL');
    running = undefined;
  });

  it('refuses to listen beyond loopback without any API key, saying how to fix it', async () => {
    running = startMain({ HOST: '0.0.0.0' });
    expect(await running.exited).toBe(1);
    expect(running.stderr()).toMatch(/Refusing to listen on HOST=0\.0\.0\.0 without API keys.*API_KEYS.*npm run keys -- create --tenant.*HOST=127\.0\.0\.1/s);
    expect(running.lines.some((l) => String(l.msg).startsWith('memrag listening'))).toBe(false);
  });

  it('listens on loopback without keys, and says /v1 is open to this machine only', async () => {
    running = startMain({ HOST: '127.0.0.1' });
    const started = await running.ready;
    expect(started).toMatchObject({ apiKeys: false });
    // Written right after the start line: give the pipe a moment.
    const warning = () => running!.lines.find((l) => String(l.msg).startsWith('no API keys exist'));
    for (let i = 0; i < 50 && !warning(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(warning()).toMatchObject({
      level: 'warn',
      msg: expect.stringMatching(/\/v1 \(and \/mcp\) is open, so memrag listens on loopback \(127\.0\.0\.1\) only/),
    });
  });

  it('listens on any address with API_KEYS set', async () => {
    running = startMain({ HOST: '0.0.0.0', API_KEYS: 'acme:a-long-enough-key' });
    const started = await running.ready;
    expect(started).toMatchObject({ apiKeys: true });
    const res = await fetch(`http://127.0.0.1:${started.port as number}/v1/tags`);
    expect(res.status).toBe(401);
  });
});
