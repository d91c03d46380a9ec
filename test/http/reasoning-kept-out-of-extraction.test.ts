import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeError } from '../../src/api/error-mapping.js';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { FACT_EXTRACTION_INSTRUCTIONS } from '../../src/memory/extraction/extraction-prompts.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type ScriptedLlmServer, type ScriptedRequest, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { call, createApp } from './http-test-context.js';

/** A model's reasoning never reaches memory extraction: the job reads the stored turn, which has the answer alone. */

const SECRET = 'PRIVATE-CHAIN-OF-THOUGHT';
const isFacts = (r: ScriptedRequest) => r.body.messages[0]?.content === FACT_EXTRACTION_INSTRUCTIONS;

describeOnDrivers('reasoning kept out of memory extraction', (driver) => {
  let llm: ScriptedLlmServer;
  let ctx: AppContext;
  let release: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    llm = await startScriptedLlmServer((request) => {
      if (isFacts(request)) return reply.text('{"facts":[]}');
      return reply.text(`<think>${SECRET} in a think block.</think>Noted: you play the cello.`, { reasoning: `${SECRET} in a field.` });
    });
    const opened = await driver.provision();
    release = () => opened.release();
    const config = loadConfig({ ...opened.env, LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'on', JOB_POLL_MS: '20' });
    const model = createLlmProvider({ baseURL: llm.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } });
    ctx = await createAppContext(config, { embedder: createHashEmbedder(64), llm: model, describeError });
  });
  afterAll(async () => {
    await ctx?.close();
    await release?.();
    await llm?.close();
  });

  it('sends the extraction the answer, never the reasoning (field or <think> block)', async () => {
    const app = createApp(ctx);
    const res = await call(app, 'POST', '/v1/chat', { message: 'I play the cello.', userId: 'ivy', includeReasoning: true });
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe('Noted: you play the cello.');
    // Both forms at once: the field's and the block's, joined.
    expect(res.body.reasoning).toContain(`${SECRET} in a field.`);
    const until = Date.now() + 10_000;
    while (!llm.requests.some(isFacts) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    const facts = llm.requests.filter(isFacts);
    expect(facts).toHaveLength(1);
    const input = JSON.stringify(facts[0]!.body.messages);
    expect(input).toContain('Noted: you play the cello.');
    expect(input).not.toContain(SECRET);
  });
});
