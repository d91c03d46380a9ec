import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { baseUrlOf, isListening, type SpawnedServer, spawnServer } from './support/spawned-server.js';
import { type ScriptedLlmServer, reply, startScriptedLlmServer } from '../testkit/scripted-llm-server.js';

interface RunningServer extends SpawnedServer {
  base: string;
  port: number;
}

/** `src/main.ts` as operators run it, in a child process: embedded PGlite in memory, the bundled embedder in-process. */
async function startMain(env: Record<string, string>): Promise<RunningServer> {
  const server = spawnServer({ name: 'main', script: 'src/main.ts', env: { DATA_DIR: 'memory://', EMBEDDING_WORKERS: '0', ...env }, ready: isListening });
  const listening = await server.ready;
  return { ...server, base: baseUrlOf(listening), port: listening.port as number };
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
