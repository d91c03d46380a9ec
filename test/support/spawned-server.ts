import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { LogLine } from './captured-logger.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Settings a developer's shell may hold that would point a spawned server at another database,
 * other keys or other models than the test's: the test names each one it wants.
 */
const INHERITED_SETTINGS_DROPPED = ['DATABASE_URL', 'DATA_DIR', 'API_KEYS', 'WORKERS_IN_PROCESS', 'LLM_PROVIDERS', 'LLM_PRICES'] as const;

/** How much of stderr a failed start reports: the end is where the reason is. */
const STDERR_TAIL = 2_000;

export interface SpawnedServer {
  name: string;
  child: ChildProcess;
  /** Every JSON line the process has written to stdout so far. */
  lines: LogLine[];
  stderr: () => string;
  exited: Promise<number | null>;
  /** The first log line for which `ready` held; rejects with the tail of stderr if the process exits first. */
  ready: Promise<LogLine>;
}

export interface SpawnOptions {
  /** Names the process in a failed start's message. */
  name: string;
  /** Relative to the repository root, run as `node --import tsx <script>`. */
  script: string;
  /** On top of the cleaned environment, with loopback, an ephemeral port and info logging by default. */
  env: Record<string, string>;
  ready: (line: LogLine) => boolean;
}

export function spawnServer({ name, script, env, ready }: SpawnOptions): SpawnedServer {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const key of INHERITED_SETTINGS_DROPPED) delete inherited[key];
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: repoRoot,
    env: { ...inherited, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const readyLine = new Promise<LogLine>((resolveReady, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let parsed: LogLine;
      try {
        parsed = JSON.parse(line) as LogLine;
      } catch {
        // tsx and node may write plain-text notices; only the server's own log lines count.
        return;
      }
      lines.push(parsed);
      if (ready(parsed)) resolveReady(parsed);
    });
    void exited.then((code) => reject(new Error(`${name} exited with ${code} before it was ready: ${stderr.slice(-STDERR_TAIL)}`)));
  });
  // A process whose readiness nobody awaits (stopped or killed early) must not leave an unhandled rejection.
  readyLine.catch(() => {});
  return { name, child, lines, stderr: () => stderr, exited, ready: readyLine };
}

export const isListening = (line: LogLine): boolean => typeof line.msg === 'string' && line.msg.startsWith('memrag listening');

/** The base URL of a server from its listening line (it binds an ephemeral port on loopback). */
export const baseUrlOf = (listening: LogLine): string => `http://127.0.0.1:${listening.port as number}`;

export const isRunning = (server: SpawnedServer): boolean => server.child.exitCode === null && server.child.signalCode === null;

/** SIGTERM first so servers can shut down cleanly; SIGKILL whatever has not exited within `graceMs`. */
export async function stopServers(servers: readonly SpawnedServer[], graceMs = 10_000): Promise<void> {
  for (const s of servers) if (isRunning(s)) s.child.kill('SIGTERM');
  const stopped = await Promise.race([
    Promise.all(servers.map((s) => s.exited)).then(() => true),
    new Promise<false>((r) => setTimeout(() => r(false), graceMs).unref()),
  ]);
  if (!stopped) for (const s of servers) if (isRunning(s)) s.child.kill('SIGKILL');
  await Promise.all(servers.map((s) => s.exited));
}

export async function send(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}

export async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms: number): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}; last ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
