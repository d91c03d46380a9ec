import { afterEach, describe, expect, it } from 'vitest';
import { createLlmProvider, type LlmProviderOptions } from '../../src/llm/llm-provider.js';
import { AbortedError, AuthenticationError, ContextOverflowError, RateLimitError, TransientError } from '../../src/llm/llm-errors.js';
import { reply, startScriptedLlmServer, type Script, type ScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(script: Script, options: Partial<LlmProviderOptions> = {}) {
  server = await startScriptedLlmServer(script);
  const provider = createLlmProvider({
    baseURL: server.url,
    apiKey: 'test-key',
    model: 'test-model',
    timeoutMs: 5_000,
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
    ...options,
  });
  return { server, provider };
}

const user = (content: string) => [{ role: 'user' as const, content }];

describe('llm provider', () => {
  it('returns a plain completion with usage', async () => {
    const { server, provider } = await setup([reply.text('Hello there', { usage: { prompt_tokens: 12, completion_tokens: 3 } })]);
    const result = await provider.complete({ messages: user('hi') });
    expect(result.message).toEqual({ role: 'assistant', content: 'Hello there', toolCalls: [] });
    expect(result.usage).toEqual({ promptTokens: 12, completionTokens: 3 });
    expect(result.finishReason).toBe('stop');
    expect(server.requests[0]!.body).toMatchObject({ model: 'test-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(server.requests[0]!.body.tools).toBeUndefined();
  });

  it('streams deltas that concatenate to the final text, usage from the last chunk', async () => {
    const { server, provider } = await setup([reply.text('The quick brown fox jumps', { chunkSize: 3, usage: { prompt_tokens: 7, completion_tokens: 9 } })]);
    const deltas: string[] = [];
    const result = await provider.stream({ messages: user('go'), onDelta: (t) => deltas.push(t) });
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('The quick brown fox jumps');
    expect(result.message.content).toBe('The quick brown fox jumps');
    expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 9 });
    expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('assembles tool calls from fragmented stream deltas', async () => {
    const { provider } = await setup([
      reply.toolCalls(
        [
          { id: 'a', name: 'lookup', arguments: '{"query": "pgvector index types"}' },
          { id: 'b', name: 'clock', arguments: '{}' },
        ],
        { chunkSize: 5 },
      ),
    ]);
    const result = await provider.stream({ messages: user('x'), onDelta: () => {} });
    expect(result.message.toolCalls).toEqual([
      { id: 'a', name: 'lookup', arguments: '{"query": "pgvector index types"}' },
      { id: 'b', name: 'clock', arguments: '{}' },
    ]);
    expect(result.finishReason).toBe('tool_calls');
  });

  it('retries a 429 after the retry-after delay, then succeeds', async () => {
    const { server, provider } = await setup([reply.rateLimited(0.2), reply.text('ok')]);
    const started = Date.now();
    const result = await provider.complete({ messages: user('hi') });
    expect(result.message.content).toBe('ok');
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('gives up with a TransientError when 500s outlast the attempts', async () => {
    const { server, provider } = await setup([reply.error(500), reply.error(502), reply.error(503), reply.text('never')]);
    const error = await provider.complete({ messages: user('hi') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).attempts).toBe(3);
    expect((error as TransientError).status).toBe(503);
    expect((error as Error).message).toMatch(/gave up after 3 attempts/);
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry a 401', async () => {
    const { server, provider } = await setup([reply.error(401, { message: 'Incorrect API key' }), reply.text('never')]);
    await expect(provider.complete({ messages: user('hi') })).rejects.toBeInstanceOf(AuthenticationError);
    expect(server.requests).toHaveLength(1);
  });

  it('classifies a context-length 400 and does not retry it', async () => {
    const { server, provider } = await setup([reply.contextOverflow(), reply.text('never')]);
    await expect(provider.complete({ messages: user('hi') })).rejects.toBeInstanceOf(ContextOverflowError);
    expect(server.requests).toHaveLength(1);
  });

  it('fails a rate limit whose retry-after is beyond the limit without waiting', async () => {
    const { server, provider } = await setup([reply.rateLimited(3600), reply.text('never')]);
    const error = await provider.complete({ messages: user('hi') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect(server.requests).toHaveLength(1);
  });

  it('times out a slow response and retries it', async () => {
    const { server, provider } = await setup([reply.text('slow', { delayMs: 1_000 }), reply.text('fast')], { timeoutMs: 150 });
    const result = await provider.complete({ messages: user('hi') });
    expect(result.message.content).toBe('fast');
    expect(server.requests).toHaveLength(2);
  });

  it('aborts mid-stream: the server sees the connection close, the caller an AbortedError', async () => {
    const { server, provider } = await setup([reply.text('a'.repeat(200), { chunkSize: 2, chunkDelayMs: 20 }), reply.text('never')]);
    const controller = new AbortController();
    const deltas: string[] = [];
    const promise = provider.stream({
      messages: user('hi'),
      signal: controller.signal,
      onDelta: (t) => {
        deltas.push(t);
        if (deltas.length === 3) controller.abort();
      },
    });
    await expect(promise).rejects.toBeInstanceOf(AbortedError);
    await expect.poll(() => server.requests[0]?.closedEarly).toBe(true);
    expect(server.requests).toHaveLength(1);
    expect(deltas).toHaveLength(3);
  });
});
