import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLine } from './support/captured-logger.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface Run {
  child: ChildProcess;
  lines: LogLine[];
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves with the start line once listening; rejects if the process exits first. */
  listening: Promise<LogLine>;
}

/** `src/main.ts` as operators run it: embedded PGlite in memory, the bundled embedder in-process. */
function startMain(env: Record<string, string>): Run {
  const { DATABASE_URL: _url, API_KEYS: _keys, HOST: _host, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: repoRoot,
    env: { ...inherited, DATA_DIR: 'memory://', PORT: '0', EMBEDDING_WORKERS: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<LogLine>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const parsed = JSON.parse(line) as LogLine;
      lines.push(parsed);
      if (typeof parsed.msg === 'string' && parsed.msg.startsWith('memrag listening')) resolve(parsed);
    });
    void exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  listening.catch(() => {});
  return { child, lines, stderr: () => stderr, exited, listening };
}

describe('main: API keys and the listening address', () => {
  let running: Run | undefined;
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
    const started = await running.listening;
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
    const started = await running.listening;
    expect(started).toMatchObject({ apiKeys: true });
    const res = await fetch(`http://127.0.0.1:${started.port as number}/v1/tags`);
    expect(res.status).toBe(401);
  });
});
