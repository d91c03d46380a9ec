import type { AppContext } from '../../src/app-context.js';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLING_LIMITS } from '../../src/agents/model-settings.js';
import { appWithScriptedLlm, call, createTestContext } from './http-test-context.js';
import type { ScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { reply } from '../../testkit/scripted-llm-server.js';

/** /v1/chat/completions held to the chat's own sampling limits (samplingSchema), not looser ones. */
describe('OpenAI-compatible sampling bounds match the chat sampling limits', () => {
  let ctx: AppContext;
  let app: Hono;
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    ctx = await createTestContext();
    ({ app, llm } = await appWithScriptedLlm(ctx, () => reply.text('ok')));
  });
  afterAll(async () => {
    await llm?.close();
    await ctx?.close();
  });

  const base = { model: 'memrag', messages: [{ role: 'user', content: 'Hi' }] };
  const longStop = 'x'.repeat(SAMPLING_LIMITS.stopMaxChars + 1);
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['top_p of 0 was accepted', { top_p: 0 }, 'top_p'],
    ['a stop sequence over the chat limit was accepted', { stop: longStop }, 'stop'],
    ['a stop list item over the chat limit was accepted', { stop: ['ok', longStop] }, 'stop'],
    ['max_tokens over the chat limit was accepted', { max_tokens: SAMPLING_LIMITS.maxTokensMax + 1 }, 'max_tokens'],
    ['max_completion_tokens over the chat limit was accepted', { max_completion_tokens: SAMPLING_LIMITS.maxTokensMax + 1 }, 'max_completion_tokens'],
  ];
  for (const [name, extra, param] of cases) {
    it(`refuses with a 400 naming the field: ${name}`, async () => {
      const requestsBefore = llm.requests.length;
      const res = await call(app, 'POST', '/v1/chat/completions', { ...base, ...extra });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: expect.stringMatching(new RegExp(`^${param}`)) });
      expect(llm.requests.length).toBe(requestsBefore);
    });
  }

  it('still accepts the largest values the chat accepts', async () => {
    const res = await call(app, 'POST', '/v1/chat/completions', {
      ...base,
      top_p: 1,
      stop: ['y'.repeat(SAMPLING_LIMITS.stopMaxChars)],
      max_tokens: SAMPLING_LIMITS.maxTokensMax,
    });
    expect(res.status).toBe(200);
    expect(llm.requests.at(-1)!.body).toMatchObject({ top_p: 1, stop: ['y'.repeat(SAMPLING_LIMITS.stopMaxChars)] });
  });
});
