import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { sql } from 'drizzle-orm';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeError } from '../../src/api/error-mapping.js';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type ScriptedLlmServer, type ScriptedReply, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { createApp } from './http-test-context.js';

/**
 * `/v1/chat/completions` returns the model's reasoning as `reasoning_content` (streamed as
 * `delta.reasoning_content`) when the request asks for it, with `include_reasoning: true` or a
 * `reasoning_effort`; never in `content`, and never to a client that did not ask.
 */
describe('reasoning on the OpenAI-compatible route, with the official openai client', () => {
  let llm: ScriptedLlmServer;
  let ctx: AppContext;
  let server: ServerType;
  let client: OpenAI;
  let replies: ScriptedReply[] = [];

  beforeAll(async () => {
    llm = await startScriptedLlmServer(() => replies.shift() ?? reply.text('ok'));
    const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' });
    const model = createLlmProvider({ baseURL: llm.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } });
    ctx = await createAppContext(config, { embedder: createHashEmbedder(64), llm: model, describeError });
    const app = createApp(ctx);
    const base = await new Promise<string>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
    client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await ctx?.close();
    await llm?.close();
  });
  beforeEach(async () => {
    replies = [];
    llm.requests.length = 0;
    await ctx.database.db.execute(sql`DELETE FROM runs`);
  });

  const question = [{ role: 'user' as const, content: 'Which is larger, 9.9 or 9.11?' }];
  const messageOf = (completion: OpenAI.Chat.Completions.ChatCompletion) =>
    completion.choices[0]!.message as (typeof completion.choices)[0]['message'] & { reasoning_content?: string };
  const deltaOf = (chunk: ChatCompletionChunk) => (chunk.choices[0]?.delta ?? {}) as { content?: string | null; reasoning_content?: string };

  it('returns reasoning_content beside the answer when reasoning_effort is given, and sends the effort on', async () => {
    replies = [reply.text('9.9 is larger.', { reasoning: 'Compare 9.90 with 9.11.', reasoningTokens: 12, cachedTokens: 4 })];
    const completion = await client.chat.completions.create({ model: 'memrag', messages: question, reasoning_effort: 'low' });
    const message = messageOf(completion);
    expect(message.content).toBe('9.9 is larger.');
    expect(message.reasoning_content).toBe('Compare 9.90 with 9.11.');
    expect(llm.requests[0]!.body).toMatchObject({ reasoning_effort: 'low' });
    // The provider's cached and reasoning tokens, in OpenAI's detail objects.
    expect(completion.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 12 } });
  });

  it('keeps a <think> block out of content too, and gives a client that did not ask no reasoning at all', async () => {
    replies = [reply.text('<think>Compare 9.90 with 9.11.</think>9.9 is larger.')];
    const completion = await client.chat.completions.create({ model: 'memrag', messages: question });
    const message = messageOf(completion);
    expect(message.content).toBe('9.9 is larger.');
    expect(message).not.toHaveProperty('reasoning_content');
    expect(JSON.stringify(completion)).not.toContain('Compare 9.90');
  });

  it('streams the reasoning as delta.reasoning_content chunks before the content, with include_reasoning', async () => {
    replies = [reply.text('9.9 is larger.', { reasoning: 'Compare 9.90 with 9.11.', chunkSize: 4 })];
    const params: ChatCompletionCreateParamsStreaming & { include_reasoning: boolean } = {
      model: 'memrag',
      messages: question,
      stream: true,
      include_reasoning: true,
    };
    const deltas: Array<ReturnType<typeof deltaOf>> = [];
    for await (const chunk of await client.chat.completions.create(params)) deltas.push(deltaOf(chunk));
    const reasoning = deltas.map((d) => d.reasoning_content ?? '').join('');
    const content = deltas.map((d) => d.content ?? '').join('');
    expect(reasoning).toBe('Compare 9.90 with 9.11.');
    expect(content).toBe('9.9 is larger.');
    const lastThought = deltas.findLastIndex((d) => d.reasoning_content !== undefined);
    const firstText = deltas.findIndex((d) => typeof d.content === 'string' && d.content !== '');
    expect(lastThought).toBeLessThan(firstText);
    // No chunk carries both: the reasoning never rides in content.
    expect(deltas.some((d) => d.reasoning_content !== undefined && d.content)).toBe(false);
  });

  it('streams no reasoning to a client that did not ask', async () => {
    replies = [reply.text('9.9 is larger.', { reasoning: 'Compare 9.90 with 9.11.', chunkSize: 4 })];
    const deltas: Array<ReturnType<typeof deltaOf>> = [];
    for await (const chunk of await client.chat.completions.create({ model: 'memrag', messages: question, stream: true })) deltas.push(deltaOf(chunk));
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('9.9 is larger.');
    expect(deltas.some((d) => d.reasoning_content !== undefined)).toBe(false);
  });

  it('continues the thread when the client sends the reasoning back, and never sends it to the model again', async () => {
    replies = [reply.text('9.9 is larger.', { reasoning: 'PRIVATE: compare 9.90 with 9.11.' }), reply.text('By 0.79.')];
    const first = await client.chat.completions.create({
      model: 'memrag',
      messages: question,
      include_reasoning: true,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const held = messageOf(first);
    expect(held.reasoning_content).toBe('PRIVATE: compare 9.90 with 9.11.');
    const conversationId = (first as unknown as { memrag: { conversationId: string } }).memrag.conversationId;

    const second = await client.chat.completions.create({
      model: 'memrag',
      messages: [
        ...question,
        { role: 'assistant', content: held.content, reasoning_content: held.reasoning_content } as OpenAI.ChatCompletionAssistantMessageParam,
        { role: 'user', content: 'By how much?' },
      ],
    });
    expect((second as unknown as { memrag: { conversationId: string } }).memrag.conversationId).toBe(conversationId);
    expect(messageOf(second)).not.toHaveProperty('reasoning_content');
    expect(JSON.stringify(llm.requests[1]!.body.messages)).not.toContain('PRIVATE');
  });
});
