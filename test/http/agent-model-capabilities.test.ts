import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { expect, it } from 'vitest';
import { CONTINUE_PROMPT } from '../../src/llm/continuation.js';
import { type Script, type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { parseSse } from '../support/parse-sse.js';
import { call } from './http-test-context.js';
import { scriptedAgentApp } from './support/scripted-agent-app.js';

/**
 * What `/v1/chat` exposes of the model (issue 55, items 1, 3, 4, 7, 9): reasoning, continued
 * replies, sampling, per-turn instructions, the loop's events and usage, a stable prompt prefix.
 */

const REASONING = 'The user asks about tea; source 1 says green.';

describeOnDrivers("the model's capabilities through /v1/chat", (driver) => {
  const { ctx, appWithLlm: appWithScripted } = scriptedAgentApp(driver);
  /** The app over a scripted model, with retries (fast) so that `retry` events can be seen. */
  const appWithLlm = (script: Script) => appWithScripted(script, { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } });
  const saveTea = () => ctx().memories.forTenant('default').save({ key: 'tea', content: 'Alice prefers green tea', agentId: 'default' });
  const stream = async (app: Hono, body: Record<string, unknown>) => {
    const res = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    expect(res.status).toBe(200);
    return parseSse(await res.text());
  };
  const systemOf = (llm: ScriptedLlmServer, i: number) => String(llm.requests[i]!.body.messages[0]!.content);

  it('streams reasoning as thinking events and keeps it out of the answer, citations, stored turn and the next turn', async () => {
    await saveTea();
    const { app, llm } = await appWithLlm([
      reply.text('Green tea [1].', { reasoning: REASONING, chunkSize: 5 }),
      reply.text('<think>Cite [1] again? No.</think>\n\nYou are welcome.', { chunkSize: 3 }),
    ]);
    const events = await stream(app, { message: 'What does Alice drink?', conversationId: crypto.randomUUID() });
    const thinking = events.filter((e) => e.event === 'thinking').map((e) => e.data.text);
    expect(thinking.join('')).toBe(REASONING);
    const answer = events.filter((e) => e.event === 'delta').map((e) => e.data.text);
    expect(answer.join('')).toBe('Green tea [1].');
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data.answer).toBe('Green tea [1].');
    expect(done.data.reasoning).toBeUndefined();
    // Only the answer's [1] is cited, not the reasoning's "source 1".
    expect(done.data.citations.map((c: { id: number }) => c.id)).toEqual([1]);

    const conversationId = done.data.conversationId;
    const second = await call(app, 'POST', '/v1/chat', { message: 'Thanks', conversationId, includeReasoning: true });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ answer: 'You are welcome.', reasoning: 'Cite [1] again? No.' });
    // The history sent with the second turn, what compaction reads, has no reasoning.
    expect(JSON.stringify(llm.requests[1]!.body.messages)).not.toContain('source 1 says');
    const stored = await call(app, 'GET', `/v1/conversations/${conversationId}/export?agentId=default`);
    expect(stored.status).toBe(200);
    expect(JSON.stringify(stored.body)).toContain('Green tea [1].');
    expect(JSON.stringify(stored.body)).not.toContain('source 1 says');
    expect(JSON.stringify(stored.body)).not.toContain('again? No');
  });

  it("sends the agent's reasoning effort and sampling, a request's own fields winning field by field", async () => {
    const { app, llm } = await appWithLlm([reply.text('One.'), reply.text('Two.')]);
    const agent = await call(app, 'POST', '/v1/agents', {
      id: 'tuned',
      name: 'Tuned',
      reasoning: { effort: 'low' },
      sampling: { maxTokens: 300, topP: 0.5, stop: ['END'], presencePenalty: 0.5 },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    expect(agent.body).toMatchObject({ reasoning: { effort: 'low' }, sampling: { maxTokens: 300 } });
    expect((await call(app, 'POST', '/v1/chat', { message: 'Hi', agentId: 'tuned' })).status).toBe(200);
    expect(llm.requests[0]!.body).toMatchObject({ reasoning_effort: 'low', max_tokens: 300, top_p: 0.5, stop: ['END'], presence_penalty: 0.5 });
    expect(llm.requests[0]!.body.seed).toBeUndefined();

    const res = await call(app, 'POST', '/v1/chat', {
      message: 'Hi',
      agentId: 'tuned',
      reasoning: { effort: 'high' },
      sampling: { maxTokens: 50, seed: 3, frequencyPenalty: -1 },
    });
    expect(res.status).toBe(200);
    expect(llm.requests[1]!.body).toMatchObject({
      reasoning_effort: 'high',
      max_tokens: 50,
      top_p: 0.5,
      stop: ['END'],
      seed: 3,
      presence_penalty: 0.5,
      frequency_penalty: -1,
    });
  });

  it.each([
    [{ reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    [{ sampling: { stop: ['a', 'b', 'c', 'd', 'e'] } }, 'sampling.stop'],
    [{ sampling: { maxTokens: 0 } }, 'sampling.maxTokens'],
    [{ sampling: { maxTokens: -5 } }, 'sampling.maxTokens'],
    [{ sampling: { temperature: 1 } }, 'sampling.temperature'],
    [{ instructions: '' }, 'instructions'],
  ])('refuses %j with a 400 naming %s, before any model call', async (body, field) => {
    const { app, llm } = await appWithLlm([]);
    const res = await call(app, 'POST', '/v1/chat', { message: 'Hi', ...body });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
    expect(llm.requests).toHaveLength(0);
    const agent = await call(app, 'POST', '/v1/agents', { name: 'Bad', ...(field === 'instructions' ? { truncation: { maxContinuations: 6 } } : body) });
    expect(agent.status).toBe(400);
    expect(agent.body.error.details.map((d: { path: string }) => d.path)).toContain(field === 'instructions' ? 'truncation.maxContinuations' : field);
    expect((await call(app, 'GET', '/v1/agents')).body.items).toEqual([]);
  });

  it('continues a reply cut by the output limit and stores the joined answer; still cut, stopReason max_tokens', async () => {
    const { app, llm } = await appWithLlm([
      reply.text('Tea is ', { finishReason: 'length' }),
      reply.text('green.'),
      reply.text('cut', { finishReason: 'length' }),
    ]);
    const conversationId = crypto.randomUUID();
    const joined = await call(app, 'POST', '/v1/chat', { message: 'Tea?', conversationId });
    expect(joined.body).toMatchObject({ answer: 'Tea is green.', stopReason: 'completed' });
    expect(llm.requests[1]!.body.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Tea is ' },
      { role: 'user', content: CONTINUE_PROMPT },
    ]);
    const exported = JSON.stringify((await call(app, 'GET', `/v1/conversations/${conversationId}/export?agentId=default`)).body);
    expect(exported).toContain('Tea is green.');
    expect(exported).not.toContain(CONTINUE_PROMPT);

    expect((await call(app, 'POST', '/v1/agents', { id: 'short', name: 'Short', truncation: { maxContinuations: 0 } })).status).toBe(201);
    const cut = await call(app, 'POST', '/v1/chat', { message: 'Tea?', agentId: 'short' });
    expect(cut.body).toMatchObject({ answer: 'cut', stopReason: 'max_tokens' });
    expect(llm.requests).toHaveLength(3);
    const run = await call(app, 'GET', `/v1/runs/${cut.body.runId}`);
    expect(run.body).toMatchObject({ status: 'completed', stopReason: 'max_tokens' });
  });

  it("adds a turn's instructions after the agent's for that turn only, the prompt's stable prefix the same on every turn", async () => {
    const { app, llm } = await appWithLlm([reply.text('Un.'), reply.text('Deux.'), reply.text('Trois.')]);
    expect((await call(app, 'POST', '/v1/agents', { id: 'fr', name: 'Fr', instructions: 'Answer in French.' })).status).toBe(201);
    const conversationId = crypto.randomUUID();
    const turn = (body: Record<string, unknown>) => call(app, 'POST', '/v1/chat', { agentId: 'fr', conversationId, ...body });
    expect((await turn({ message: 'One?', instructions: 'Use one word.' })).status).toBe(200);
    expect((await turn({ message: 'Two?' })).status).toBe(200);
    expect((await turn({ message: 'Three?', instructions: 'Use digits.' })).status).toBe(200);

    const first = systemOf(llm, 0);
    const second = systemOf(llm, 1);
    const third = systemOf(llm, 2);
    expect(first).toContain('<turn_instructions>\nUse one word.\n</turn_instructions>');
    expect(first.indexOf('<turn_instructions>')).toBeGreaterThan(first.indexOf('</agent_instructions>'));
    expect(second).not.toContain('Use one word.');
    expect(second).not.toContain('<turn_instructions>');
    expect(third).toContain('Use digits.');
    // The stable part, the rules and the agent's instructions, is byte for byte the start of every
    // turn's system message: the second turn's recall_turns note and the turns' instructions come after it.
    const stableEnd = first.indexOf("Whatever the agent's instructions say:");
    const stable = first.slice(0, first.indexOf('\n', stableEnd));
    expect(stable).toContain('Answer in French.');
    expect(second.slice(0, stable.length)).toBe(stable);
    expect(third.slice(0, stable.length)).toBe(stable);
    expect(second).toContain('recall_turns');
    expect(stable).not.toContain('recall_turns');
  });

  it('streams turn_start, thinking, deltas, turn_end, tool events and retries in order, with cached and reasoning tokens', async () => {
    const { app } = await appWithLlm([
      reply.error(503),
      reply.toolCalls([{ id: 's1', name: 'search_memories', arguments: '{"query":"tea"}' }], {
        reasoning: 'Search first.',
        usage: { prompt_tokens: 100, completion_tokens: 10 },
        cachedTokens: 64,
      }),
      reply.text('Nothing found.', { usage: { prompt_tokens: 120, completion_tokens: 8 }, cachedTokens: 96, reasoningTokens: 3 }),
    ]);
    const events = await stream(app, { message: 'Tea?' });
    const names = events
      .map((e) => e.event)
      .filter((name, i, all) => !(name === 'delta' && all[i - 1] === 'delta') && !(name === 'thinking' && all[i - 1] === 'thinking'));
    expect(names).toEqual(['retrieval', 'turn_start', 'retry', 'thinking', 'turn_end', 'tool_start', 'tool_end', 'turn_start', 'delta', 'turn_end', 'done']);
    const retry = events.find((e) => e.event === 'retry')!.data;
    expect(retry).toMatchObject({ attempt: 1, status: 503, delayMs: expect.any(Number), reason: expect.stringContaining('503') });
    const ends = events.filter((e) => e.event === 'turn_end').map((e) => e.data);
    expect(ends).toEqual([
      { iteration: 1, finishReason: 'tool_calls', usage: { promptTokens: 100, completionTokens: 10, totalTokens: 110, cachedTokens: 64 } },
      { iteration: 2, finishReason: 'stop', usage: { promptTokens: 120, completionTokens: 8, totalTokens: 128, cachedTokens: 96, reasoningTokens: 3 } },
    ]);
    expect(events.filter((e) => e.event === 'turn_start').map((e) => e.data)).toEqual([{ iteration: 1 }, { iteration: 2 }]);
    const done = events.at(-1)!.data;
    expect(done.usage).toEqual({ promptTokens: 220, completionTokens: 18, totalTokens: 238, cachedTokens: 160, reasoningTokens: 3 });
    const run = await call(app, 'GET', `/v1/runs/${done.runId}`);
    expect(run.body.usage).toEqual(done.usage);
  });

  it("keeps the reasoning with a paused run, streams a resumed run's events, and replays them from the run's event log", async () => {
    const where = { type: 'function', function: { name: 'get_location', description: 'Where the user is', parameters: { type: 'object', properties: {} } } };
    const { app } = await appWithLlm([
      reply.toolCalls([{ id: 'loc', name: 'get_location', arguments: '{}' }], { reasoning: 'Ask the device.' }),
      reply.text('You are in Oslo.', { reasoning: 'It said Oslo.' }),
    ]);
    const paused = await call(app, 'POST', '/v1/chat', { message: 'Where am I?', tools: [where], includeReasoning: true });
    expect(paused.body.status).toBe('requires_action');
    const res = await app.request(`/v1/runs/${paused.body.runId}/tool-outputs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ toolOutputs: [{ toolCallId: 'loc', output: 'Oslo' }], stream: true }),
    });
    const events = parseSse(await res.text());
    const names = events.map((e) => e.event).filter((name, i, all) => !(name === all[i - 1] && (name === 'delta' || name === 'thinking')));
    // The client's output is settled first (its tool_end), then the next model call.
    expect(names).toEqual(['tool_start', 'tool_end', 'turn_start', 'thinking', 'delta', 'turn_end', 'done']);
    expect(events.find((e) => e.event === 'turn_start')!.data).toEqual({ iteration: 2 });
    expect(events.at(-1)!.data).toMatchObject({ answer: 'You are in Oslo.', reasoning: 'Ask the device.\n\nIt said Oslo.' });

    const replay = await app.request(`/v1/runs/${paused.body.runId}/events`, { headers: { 'last-event-id': '0' } });
    expect(replay.status).toBe(200);
    const replayed = parseSse(await replay.text()).map((e) => e.event);
    const framing = replayed.filter((name) => name === 'turn_start' || name === 'turn_end' || name === 'done');
    expect(framing.slice(-3)).toEqual(['turn_start', 'turn_end', 'done']);
    expect(replayed).toContain('thinking');
  });

  it('/v1/chat/completions: a reply still cut is finish_reason length; bad sampling is a 400 naming the param', async () => {
    const { app, llm } = await appWithLlm([reply.text('cut', { finishReason: 'length' })]);
    expect((await call(app, 'POST', '/v1/agents', { id: 'short', name: 'Short', truncation: { maxContinuations: 0 } })).status).toBe(201);
    const cut = await call(app, 'POST', '/v1/chat/completions', { model: 'memrag:short', messages: [{ role: 'user', content: 'Tea?' }], max_tokens: 3 });
    expect(cut.status).toBe(200);
    expect(cut.body.choices[0]).toMatchObject({ message: { content: 'cut' }, finish_reason: 'length' });
    expect(llm.requests[0]!.body.max_tokens).toBe(3);
    for (const [field, value] of [
      ['stop', ['a', 'b', 'c', 'd', 'e']],
      ['reasoning_effort', 'extreme'],
      ['max_tokens', 0],
    ] as const) {
      const res = await call(app, 'POST', '/v1/chat/completions', { model: 'memrag', messages: [{ role: 'user', content: 'Hi' }], [field]: value });
      expect(res.status, field).toBe(400);
      expect(res.body.error.param, field).toBe(field);
    }
    expect(llm.requests).toHaveLength(1);
  });

  it('streams the same events to a client of a listening server', async () => {
    const { app } = await appWithLlm([reply.text('<think>Hmm.</think>Hello.', { chunkSize: 2 })]);
    let listening!: ServerType;
    const base = await new Promise<string>((resolve) => {
      listening = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
    try {
      const res = await fetch(`${base}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ message: 'Hi', includeReasoning: true }),
      });
      const events = parseSse(await res.text());
      expect(
        events
          .filter((e) => e.event === 'thinking')
          .map((e) => e.data.text)
          .join(''),
      ).toBe('Hmm.');
      expect(
        events
          .filter((e) => e.event === 'delta')
          .map((e) => e.data.text)
          .join(''),
      ).toBe('Hello.');
      expect(events.at(-1)).toMatchObject({ event: 'done', data: { answer: 'Hello.', reasoning: 'Hmm.' } });
    } finally {
      await new Promise<void>((resolve) => listening.close(() => resolve()));
    }
  });
});
