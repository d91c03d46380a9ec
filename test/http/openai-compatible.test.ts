import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { readFileSync } from 'node:fs';
import { describeError } from '../../src/api/error-mapping.js';
import { IGNORED_COMPLETION_PARAMETERS } from '../../src/api/schemas/openai-schemas.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { FACT_EXTRACTION_INSTRUCTIONS, MEMORY_DECISION_INSTRUCTIONS } from '../../src/memory/extraction/extraction-prompts.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type ScriptedLlmServer, type ScriptedReply, type ScriptedRequest, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { call, clearConversations, clearMemories, createApp, createTestContext } from './http-test-context.js';

const isFacts = (r: ScriptedRequest) => r.body.messages[0]?.content === FACT_EXTRACTION_INSTRUCTIONS;
const isDecision = (r: ScriptedRequest) => r.body.messages[0]?.content === MEMORY_DECISION_INSTRUCTIONS;

/** An app listening on 127.0.0.1, and the official OpenAI client pointed at its /v1. */
async function listen(app: Hono, apiKey = 'unused'): Promise<{ server: ServerType; client: OpenAI; base: string }> {
  let server!: ServerType;
  const base = await new Promise<string>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
  });
  return { server, base, client: new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0 }) };
}
const close = (server: ServerType | undefined) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

describe('POST /v1/chat/completions with the official openai client', () => {
  let llm: ScriptedLlmServer;
  let ctx: AppContext;
  let app: Hono;
  let server: ServerType;
  let client: OpenAI;
  let base: string;
  /** The chat's replies, in order; extraction requests are answered apart. */
  let chatReplies: ScriptedReply[] = [];
  const chatRequests = () => llm.requests.filter((r) => !isFacts(r) && !isDecision(r));

  beforeAll(async () => {
    llm = await startScriptedLlmServer((request) => {
      if (isFacts(request)) {
        const text = String(request.body.messages[1]?.content);
        const facts = text.includes('Gdansk') ? [{ content: 'The user lives in Gdansk.', tags: ['profile'] }] : [];
        return reply.text(JSON.stringify({ facts }));
      }
      if (isDecision(request)) return reply.text('{"decisions":[{"fact":0,"event":"ADD"}]}');
      return chatReplies.shift() ?? reply.text('ok');
    });
    const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'on', JOB_POLL_MS: '20' });
    const model = createLlmProvider({ baseURL: llm.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } });
    ctx = await createAppContext(config, { embedder: createHashEmbedder(64), llm: model, describeError });
    app = createApp(ctx);
    ({ server, client, base } = await listen(app));
  });
  afterAll(async () => {
    await close(server);
    await ctx?.close();
    await llm?.close();
  });
  beforeEach(async () => {
    chatReplies = [];
    llm.requests.length = 0;
    await clearMemories(ctx);
    await clearConversations(ctx);
    await ctx.database.db.execute(sql`DELETE FROM runs`);
  });

  const saveTea = () => call(app, 'POST', '/v1/memories', { key: 'tea', content: 'Ada drinks green tea every morning', userId: 'ada' });

  it('answers a completion that cites a saved memory, with memrag beside OpenAI fields', async () => {
    await saveTea();
    chatReplies = [reply.text('Green tea, every morning [1].', { usage: { prompt_tokens: 120, completion_tokens: 9 } })];
    const completion = await client.chat.completions.create({
      model: 'memrag',
      user: 'ada',
      messages: [
        { role: 'system', content: 'Answer in one sentence.' },
        { role: 'user', content: 'What do I drink in the morning?' },
      ],
      temperature: 0.2,
      seed: 7,
    });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'memrag',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Green tea, every morning [1].' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 },
    });
    const memrag = (completion as unknown as { memrag: { citations: Array<Record<string, unknown>>; conversationId: string; runId: string } }).memrag;
    expect(memrag.citations).toMatchObject([{ id: 1, kind: 'memory', key: 'tea' }]);
    // The memory reached the model as a numbered source, and the system message as the turn's instructions.
    const sent = chatRequests()[0]!.body.messages;
    expect(String(sent[0]!.content)).toContain('<agent_instructions>\nAnswer in one sentence.\n</agent_instructions>');
    expect(String(sent.at(-1)!.content)).toContain('Ada drinks green tea every morning');
    expect((await call(app, 'GET', `/v1/runs/${memrag.runId}`)).body).toMatchObject({
      status: 'completed',
      userId: 'ada',
      conversationId: memrag.conversationId,
    });
  });

  it('streams chunks, the usage when asked, and [DONE], citing the memory', async () => {
    await saveTea();
    chatReplies = [reply.text('You drink green tea [1].', { chunkSize: 4 })];
    const stream = await client.chat.completions.create({
      model: 'memrag',
      user: 'ada',
      messages: [{ role: 'user', content: 'What do I drink in the morning?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('You drink green tea [1].');
    expect(chunks.filter((c) => c.choices[0]?.finish_reason === 'stop')).toHaveLength(1);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const finished = chunks.find((c) => c.choices[0]?.finish_reason === 'stop') as unknown as { memrag: { citations: unknown[] } };
    expect(finished.memrag.citations).toMatchObject([{ kind: 'memory', key: 'tea' }]);

    // The raw stream ends with OpenAI's terminator.
    chatReplies = [reply.text('Tea.')];
    const raw = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'memrag', messages: [{ role: 'user', content: 'Tea?' }], stream: true }),
    });
    expect(raw.headers.get('content-type')).toContain('text/event-stream');
    expect((await raw.text()).trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('continues the thread its messages hold: one conversation, the history sent to the model and not stored twice', async () => {
    chatReplies = [reply.text('Hello Ada.'), reply.text('You said hello.')];
    const first = await client.chat.completions.create({ model: 'memrag', user: 'ada', messages: [{ role: 'user', content: 'Hi, I am Ada.' }] });
    const second = await client.chat.completions.create({
      model: 'memrag',
      user: 'ada',
      messages: [
        { role: 'user', content: 'Hi, I am Ada.' },
        { role: 'assistant', content: first.choices[0]!.message.content },
        { role: 'user', content: 'What did I say?' },
      ],
    });
    const ids = [first, second].map((c) => (c as unknown as { memrag: { conversationId: string } }).memrag.conversationId);
    expect(ids[1]).toBe(ids[0]);
    const stored = await call(app, 'GET', `/v1/conversations/${ids[0]}`);
    expect(stored.body.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`)).toEqual([
      'user: Hi, I am Ada.',
      'assistant: Hello Ada.',
      'user: What did I say?',
      'assistant: You said hello.',
    ]);
    const sent = chatRequests()[1]!.body.messages.map((m) => `${m.role}: ${String(m.content).slice(0, 40)}`);
    expect(sent.slice(1, 3)).toEqual(['user: Hi, I am Ada.', 'assistant: Hello Ada.']);

    // An edited history is another thread.
    chatReplies = [reply.text('Fine.')];
    const edited = await client.chat.completions.create({
      model: 'memrag',
      user: 'ada',
      messages: [
        { role: 'user', content: 'Hi, I am Ada.' },
        { role: 'assistant', content: 'Something else.' },
        { role: 'user', content: 'And?' },
      ],
    });
    expect((edited as unknown as { memrag: { conversationId: string } }).memrag.conversationId).not.toBe(ids[0]);
  });

  it('recalls, in a new thread, a fact extracted from an earlier one', async () => {
    chatReplies = [reply.text('Congratulations on the move!')];
    const first = await client.chat.completions.create({ model: 'memrag', user: 'jo', messages: [{ role: 'user', content: 'We just moved to Gdansk!' }] });
    const firstConversation = (first as unknown as { memrag: { conversationId: string } }).memrag.conversationId;
    const until = Date.now() + 10_000;
    while ((await call(app, 'GET', '/v1/memories?userId=jo')).body.items.length === 0) {
      if (Date.now() > until) throw new Error('no memory was extracted');
      await new Promise((r) => setTimeout(r, 25));
    }
    chatReplies = [reply.text('In Gdansk [1].')];
    const second = await client.chat.completions.create({ model: 'memrag', user: 'jo', messages: [{ role: 'user', content: 'Where do I live now?' }] });
    expect((second as unknown as { memrag: { conversationId: string } }).memrag.conversationId).not.toBe(firstConversation);
    const question = String(chatRequests().at(-1)!.body.messages.at(-1)!.content);
    expect(question).toContain('The user lives in Gdansk.');
    expect((second as unknown as { memrag: { citations: unknown[] } }).memrag.citations).toMatchObject([{ kind: 'memory' }]);
  });

  it('makes a client tool round trip: tool_calls, then the results in the next request', async () => {
    chatReplies = [reply.toolCalls([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]), reply.text('It is sunny in Oslo.')];
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const paused = await client.chat.completions.create({ model: 'memrag', messages, tools });
    expect(paused.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
    });
    messages.push(paused.choices[0]!.message, { role: 'tool', tool_call_id: 'call_1', content: '{"sky":"sunny"}' });
    const answered = await client.chat.completions.create({ model: 'memrag', messages, tools });
    expect(answered.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'It is sunny in Oslo.' } });
    const resumed = chatRequests()[1]!.body.messages;
    expect(resumed.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: '{"sky":"sunny"}' });
    // Answering the same calls again finds no waiting run.
    const again = await client.chat.completions.create({ model: 'memrag', messages, tools }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(OpenAI.ConflictError);
  });

  it('resumes a streamed pause whose message had text, sending the client history again', async () => {
    chatReplies = [
      { kind: 'reply', content: 'Let me check. ', toolCalls: [{ id: 'call_7', name: 'get_weather', arguments: '{"city":"Bergen"}' }] },
      reply.text('Rain in Bergen, as ever.'),
    ];
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    // A thread begun before memrag saw it: its history is the client's alone.
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'I am flying to Bergen tomorrow.' },
      { role: 'assistant', content: 'Have a good trip!' },
      { role: 'user', content: 'What is the weather there?' },
    ];
    const stream = client.chat.completions.stream({ model: 'memrag', user: 'ada', messages, tools });
    const paused = await stream.finalChatCompletion();
    expect(paused.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: 'Let me check. ', tool_calls: [{ id: 'call_7' }] } });
    messages.push(paused.choices[0]!.message as OpenAI.Chat.Completions.ChatCompletionMessageParam, {
      role: 'tool',
      tool_call_id: 'call_7',
      content: '{"sky":"rain"}',
    });
    const answered = await client.chat.completions.create({ model: 'memrag', user: 'ada', messages, tools });
    expect(answered.choices[0]!.message.content).toBe('Rain in Bergen, as ever.');
    const resumed = chatRequests()[1]!.body.messages.map((m) => String(m.content ?? ''));
    expect(resumed).toContain('I am flying to Bergen tomorrow.');
    expect(resumed).toContain('Have a good trip!');

    // Another user cannot answer that thread's calls, even naming its conversation.
    chatReplies = [reply.toolCalls([{ id: 'call_8', name: 'get_weather', arguments: '{}' }])];
    const again = await client.chat.completions.create({ model: 'memrag', user: 'ada', messages: [{ role: 'user', content: 'And in Oslo?' }], tools });
    const conversationId = (again as unknown as { memrag: { conversationId: string } }).memrag.conversationId;
    const intruder = await client.chat.completions
      .create(
        {
          model: 'memrag',
          user: 'eve',
          messages: [{ role: 'user', content: 'And in Oslo?' }, again.choices[0]!.message, { role: 'tool', tool_call_id: 'call_8', content: '{}' }],
          tools,
        },
        { headers: { 'X-Memrag-Conversation-Id': conversationId } },
      )
      .catch((e: unknown) => e);
    expect(intruder).toBeInstanceOf(OpenAI.ConflictError);
  });

  it('tells an OpenAI client, in words, of a turn that waits for approval', async () => {
    await call(app, 'POST', '/v1/agents', { id: 'careful', name: 'Careful', approval: { tools: ['delete_memory'] } });
    chatReplies = [reply.toolCalls([{ id: 'd1', name: 'delete_memory', arguments: '{"key":"tea"}' }])];
    const waiting = await client.chat.completions.create({ model: 'memrag:careful', messages: [{ role: 'user', content: 'Forget my tea.' }] });
    const { memrag } = waiting as unknown as { memrag: { status: string; runId: string } };
    expect(memrag.status).toBe('requires_approval');
    expect(waiting.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: expect.stringContaining(`/v1/runs/${memrag.runId}/approvals`) } });
    expect(waiting.choices[0]!.message.tool_calls).toBeUndefined();
  });

  it('lists the agents as models, and refuses an unknown model with 404 in OpenAI shape', async () => {
    await call(app, 'POST', '/v1/agents', { id: 'support', name: 'Support' });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(expect.arrayContaining(['memrag', 'memrag:support']));
    expect((await client.models.retrieve('memrag:support')).id).toBe('memrag:support');

    chatReplies = [reply.text('Support here.')];
    const completion = await client.chat.completions.create({ model: 'memrag:support', messages: [{ role: 'user', content: 'Hello' }] });
    expect((await call(app, 'GET', `/v1/runs/${(completion as unknown as { memrag: { runId: string } }).memrag.runId}`)).body.agentId).toBe('support');

    const missing = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: 'model_not_found', type: 'invalid_request_error' });
    expect(await client.models.retrieve('memrag:nobody').catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('passes its sampling parameters and reasoning_effort on to the model, and accepts and ignores the rest, each listed in the docs', async () => {
    const sample: Record<(typeof IGNORED_COMPLETION_PARAMETERS)[number], unknown> = {
      logit_bias: { '50256': -100 },
      logprobs: true,
      top_logprobs: 2,
      response_format: { type: 'text' },
      tool_choice: 'auto',
      parallel_tool_calls: false,
      store: false,
      metadata: { source: 'test' },
      service_tier: 'auto',
      modalities: ['text'],
      prediction: { type: 'content', content: 'x' },
      audio: null,
    };
    const honoured = {
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 50,
      stop: ['\n'],
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      seed: 42,
      reasoning_effort: 'low',
    };
    chatReplies = [reply.text('Fine.')];
    const res = await call(app, 'POST', '/v1/chat/completions', { model: 'memrag', messages: [{ role: 'user', content: 'Hi' }], ...sample, ...honoured });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.choices[0].message.content).toBe('Fine.');
    expect(chatRequests()[0]!.body).toMatchObject(honoured);
    for (const name of Object.keys(sample)) expect(chatRequests()[0]!.body[name], name).toBeUndefined();
    const docs = readFileSync('docs/integrations.md', 'utf8');
    for (const name of IGNORED_COMPLETION_PARAMETERS) expect(docs, name).toContain(`\`${name}\``);
  });

  it('refuses what OpenAI would refuse with a 400 naming the field', async () => {
    const post = (body: unknown) => call(app, 'POST', '/v1/chat/completions', body);
    const cases: Array<[unknown, string]> = [
      [{ model: 'memrag', messages: [] }, 'messages'],
      [{ model: 'memrag' }, 'messages'],
      [
        {
          model: 'memrag',
          messages: [
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: 'Hello' },
          ],
        },
        'messages.1.role',
      ],
      [{ model: 'memrag', messages: [{ role: 'wizard', content: 'Hi' }] }, 'messages.0'],
      [{ model: 'memrag', messages: [{ role: 'user', content: 'Hi' }], n: 2 }, 'n'],
      [{ model: 'memrag', messages: [{ role: 'user', content: '   ' }] }, 'messages.0.content'],
      // Image parts pass through (issue 55); what is not an image, or not a part type at all, is refused.
      [
        {
          model: 'memrag',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Hi' },
                { type: 'image_url', image_url: { url: 'x' } },
              ],
            },
          ],
        },
        'messages.0.content.1.image_url.url',
      ],
      [
        { model: 'memrag', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] },
        'messages.0.content.0.type',
      ],
      [{ model: 'memrag', messages: [{ role: 'tool', tool_call_id: 'c9', content: 'x' }] }, 'messages.0.tool_call_id'],
    ];
    for (const [body, param] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatchObject({
        type: 'invalid_request_error',
        param: expect.stringMatching(new RegExp(`^${param.replaceAll('.', '\\.')}`)),
      });
      expect(res.body.error.message).toEqual(expect.any(String));
    }
    const notJson = await post('{');
    expect(notJson).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error', code: 'invalid_json' } } });
    const badUser = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Memrag-User-Id': 'a b' },
      body: JSON.stringify({ model: 'memrag', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(badUser.status).toBe(400);
    expect(((await badUser.json()) as { error: { param: string } }).error.param).toBe('X-Memrag-User-Id');
  });
});

describe('the OpenAI-compatible routes with API keys, and without an LLM', () => {
  let ctx: AppContext;
  let server: ServerType;
  let base: string;
  beforeAll(async () => {
    ctx = await createTestContext({ API_KEYS: 'right-key' });
    ({ server, base } = await listen(createApp(ctx)));
  });
  afterAll(async () => {
    await close(server);
    await ctx?.close();
  });

  it('answers a wrong key with 401 in OpenAI shape', async () => {
    const wrong = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'wrong-key', maxRetries: 0 });
    const error = await wrong.chat.completions.create({ model: 'memrag', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_api_key', type: 'invalid_request_error' });
    expect(await wrong.models.list().catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('answers extractively from memories without an LLM', async () => {
    const right = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'right-key', maxRetries: 0 });
    await fetch(`${base}/v1/memories`, {
      method: 'POST',
      headers: { authorization: 'Bearer right-key', 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'bike', content: 'The spare bike key hangs in the blue cupboard.' }),
    });
    const completion = await right.chat.completions.create({ model: 'memrag', messages: [{ role: 'user', content: 'Where is the spare bike key?' }] });
    expect(completion.choices[0]!.message.content).toContain('blue cupboard');
    expect((completion as unknown as { memrag: { mode: string } }).memrag.mode).toBe('extractive');
  });
});
