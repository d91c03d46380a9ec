import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLine } from './support/captured-logger.js';
import { type ScriptedLlmServer, reply, startScriptedLlmServer } from '../testkit/scripted-llm-server.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface RunningServer {
  child: ChildProcess;
  base: string;
  port: number;
  lines: LogLine[];
  exited: Promise<number | null>;
}

/** `src/main.ts` as operators run it, in a child process: embedded PGlite in memory, the bundled embedder in-process. */
async function startMain(env: Record<string, string>): Promise<RunningServer> {
  const { DATABASE_URL: _ignored, API_KEYS: _none, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: repoRoot,
    env: { ...inherited, DATA_DIR: 'memory://', HOST: '127.0.0.1', PORT: '0', EMBEDDING_WORKERS: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const parsed = JSON.parse(line) as LogLine;
      lines.push(parsed);
      if (typeof parsed.msg === 'string' && parsed.msg.startsWith('memrag listening')) resolve(parsed.port as number);
    });
    void exited.then((code) => reject(new Error(`main exited with ${code} before listening: ${stderr}`)));
  });
  const port = await listening;
  return { child, base: `http://127.0.0.1:${port}`, port, lines, exited };
}

function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** Opens a streamed chat and resolves once the first delta has arrived, with a promise of the whole text. */
async function openChatStream(base: string): Promise<{ rest: Promise<string> }> {
  const res = await fetch(`${base}/v1/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'Tell me a long story', stream: true }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('event: delta')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  const rest = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      return `${text}[cut]`;
    }
  })();
  return { rest };
}

describe('main: graceful shutdown on SIGTERM', () => {
  let llm: ScriptedLlmServer | undefined;
  let running: RunningServer | undefined;
  afterEach(async () => {
    if (running && running.child.exitCode === null) running.child.kill('SIGKILL');
    running = undefined;
    await llm?.close();
    llm = undefined;
  });

  it('refuses new connections, lets a streamed chat finish, closes and exits 0', async () => {
    // 30 chunks, 100 ms apart: the stream is mid-way when the signal arrives.
    const story = 'Once upon a time, a tea cup sat on a table; '.repeat(3);
    llm = await startScriptedLlmServer([reply.text(story, { chunkSize: Math.ceil(story.length / 30), chunkDelayMs: 100 })]);
    running = await startMain({ LLM_BASE_URL: llm.url, LLM_MODEL: 'scripted', SHUTDOWN_TIMEOUT_MS: '20000' });
    const { child, port, base, lines } = running;

    const { rest } = await openChatStream(base);
    const t0 = performance.now();
    child.kill('SIGTERM');
    // The listening socket closes as soon as the signal is handled. Until then a connection may
    // still be accepted, or reset if it was queued as the socket closed: neither is an answer yet.
    let outcome = 'connected';
    while (outcome !== 'ECONNREFUSED' && performance.now() - t0 < 5_000) outcome = await tryConnect(port);
    expect(outcome).toBe('ECONNREFUSED');

    const events = await rest;
    expect(events).toContain('event: done');
    expect(events).not.toContain('[cut]');
    expect(await running.exited).toBe(0);
    expect(llm.requests[0]!.closedEarly).toBe(false);
    const messages = lines.map((l) => l.msg);
    expect(messages).toContain('shutting down: refusing new connections, finishing requests in flight');
    expect(messages.at(-1)).toBe('shut down');
    expect(messages).not.toContain('requests still running at the shutdown deadline were cut off');
  });

  it('cuts what is still running at SHUTDOWN_TIMEOUT_MS, cancelling its LLM call, and still exits 0', async () => {
    const story = 'and then nothing happened, '.repeat(20);
    // About 20 s of stream: far past the deadline.
    llm = await startScriptedLlmServer([reply.text(story, { chunkSize: Math.ceil(story.length / 100), chunkDelayMs: 200 })]);
    running = await startMain({ LLM_BASE_URL: llm.url, LLM_MODEL: 'scripted', SHUTDOWN_TIMEOUT_MS: '500' });
    const { child, lines } = running;

    const { rest } = await openChatStream(running.base);
    const t0 = performance.now();
    child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    expect(performance.now() - t0).toBeLessThan(5_000);
    const events = await rest;
    expect(events).not.toContain('event: done');
    // The model call was abandoned, not left running.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(llm.requests[0]!.closedEarly).toBe(true);
    expect(lines.map((l) => l.msg)).toContain('requests still running at the shutdown deadline were cut off');
  });
});
