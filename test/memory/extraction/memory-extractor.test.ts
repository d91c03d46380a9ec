import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLlmProvider } from '../../../src/llm/llm-provider.js';
import { createLlmSummarizer } from '../../../src/compaction/summarizer.js';
import { type Database, openDatabase } from '../../../src/db/database.js';
import { ensureVectorSpace } from '../../../src/db/vector-space.js';
import { FACT_EXTRACTION_INSTRUCTIONS, MEMORY_DECISION_INSTRUCTIONS } from '../../../src/memory/extraction/extraction-prompts.js';
import { ExtractionStepError, createMemoryExtractor } from '../../../src/memory/extraction/memory-extractor.js';
import type { MemoryStore } from '../../../src/memory/memory-types.js';
import { createPgMemoryStore } from '../../../src/memory/pg-memory-store.js';
import { metricsRegistry } from '../../../src/observability/metrics.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import { type ScriptedLlmServer, type ScriptedReply, type ScriptedRequest, reply, startScriptedLlmServer } from '../../../testkit/scripted-llm-server.js';

/** Answers the fact request with `facts` and the decision request with `decide(request)`. */
function extractionScript(facts: ScriptedReply, decide: (request: ScriptedRequest) => ScriptedReply) {
  return (request: ScriptedRequest): ScriptedReply => {
    const system = String(request.body.messages[0]?.content ?? '');
    if (system === FACT_EXTRACTION_INSTRUCTIONS) return facts;
    if (system === MEMORY_DECISION_INSTRUCTIONS) return decide(request);
    return reply.error(500, { message: 'unexpected request' });
  };
}
const json = (value: unknown) => reply.text(JSON.stringify(value));
/** The memories the decision request showed, by id: what the model saw. */
const shownMemories = (request: ScriptedRequest) =>
  [...String(request.body.messages[1]?.content).matchAll(/<memory id="(\d+)">([^<]*)<\/memory>/g)].map((m) => ({ id: Number(m[1]), content: m[2]! }));

async function counter(name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metricsRegistry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return Number(value?.value ?? 0);
}

describe('memory extraction with a scripted model', () => {
  let database: Database;
  let memories: MemoryStore;
  let llm: ScriptedLlmServer | undefined;
  const scope = { agentId: 'extract', userId: 'ann' };
  const source = { conversationId: '00000000-0000-4000-8000-000000000001', turn: 4 };

  beforeAll(async () => {
    database = await openDatabase();
    const embedder = createHashEmbedder(64);
    await ensureVectorSpace(database.db, embedder);
    memories = createPgMemoryStore({ db: database.db, embedder });
  });
  afterAll(async () => {
    await database.close();
  });
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
  });

  async function extractorWith(script: (request: ScriptedRequest, index: number) => ScriptedReply, timeoutMs = 5_000) {
    llm = await startScriptedLlmServer(script);
    const provider = createLlmProvider({ baseURL: llm.url, apiKey: 'test', model: 'scripted', retry: { maxAttempts: 1 } });
    const failures: string[] = [];
    const extractor = createMemoryExtractor({
      summarizer: createLlmSummarizer(provider, { timeoutMs }),
      memories,
      onFailure: (reason) => failures.push(reason),
    });
    return { extractor, failures };
  }
  const conversation = (text: string) => [
    { role: 'user' as const, content: text },
    { role: 'assistant' as const, content: 'Noted!' },
  ];

  it('adds a new fact with the extracted tag, its source in metadata and the history', async () => {
    const { extractor } = await extractorWith(
      extractionScript(json({ facts: [{ content: 'The user prefers window seats on flights.', tags: ['Travel'] }] }), () =>
        json({ decisions: [{ fact: 0, event: 'ADD' }] }),
      ),
    );
    const result = await extractor.extract({ messages: conversation('Book me a window seat, I always take one.'), scope, source });
    expect(result).toMatchObject({ failures: 0, decisions: [{ event: 'ADD', status: 'applied', fact: 'The user prefers window seats on flights.' }] });
    const key = result.decisions[0]!.key!;
    const memory = await memories.get(key, scope);
    expect(memory).toMatchObject({ tags: ['extracted', 'travel'], userId: 'ann', metadata: { source: 'extraction', ...source } });
    expect((await memories.history(key, scope)).map((e) => [e.event, e.actor])).toEqual([['created', { type: 'extraction', ...source }]]);
    // The prompt carried the conversation as data, and asked for facts only.
    expect(String(llm!.requests[0]!.body.messages[1]!.content)).toContain('<message role="user">');
  });

  it('never adds a repeated fact twice, whatever the model decides', async () => {
    const { extractor } = await extractorWith(
      // A model that ADDs everything: the store's normalised-text check still refuses the repeat.
      extractionScript(json({ facts: ['the user prefers WINDOW seats on flights'] }), () => json({ decisions: [{ fact: 0, event: 'ADD' }] })),
    );
    const before = (await memories.list({ ...scope, tagsAll: ['extracted'] })).items.length;
    const result = await extractor.extract({ messages: conversation('Window seat again please.'), scope, source });
    expect(result.decisions[0]).toMatchObject({ event: 'ADD', status: 'skipped', reason: 'the scope already holds this fact' });
    expect((await memories.list({ ...scope, tagsAll: ['extracted'] })).items).toHaveLength(before);
  });

  it('updates a changed preference through the id it was shown, keeping the old content in the history', async () => {
    await memories.save({ key: 'drink', content: 'The user drinks black coffee every morning.', ...scope });
    const { extractor } = await extractorWith(
      extractionScript(json({ facts: [{ content: 'The user now drinks green tea in the morning instead of coffee.' }] }), (request) => {
        const shown = shownMemories(request).find((m) => m.content.includes('black coffee'))!;
        return json({ decisions: [{ fact: 0, event: 'UPDATE', id: shown.id, content: 'The user drinks green tea every morning (no more coffee).' }] });
      }),
    );
    const result = await extractor.extract({ messages: conversation('I switched from coffee to green tea.'), scope, source });
    expect(result.decisions[0]).toMatchObject({
      event: 'UPDATE',
      status: 'applied',
      key: 'drink',
      previousContent: 'The user drinks black coffee every morning.',
    });
    expect((await memories.get('drink', scope))?.content).toBe('The user drinks green tea every morning (no more coffee).');
    expect((await memories.history('drink', scope)).map((e) => [e.event, e.previousContent, e.actor.type])).toEqual([
      ['created', null, 'api'],
      ['updated', 'The user drinks black coffee every morning.', 'extraction'],
    ]);
    // The model saw ids, never keys.
    expect(String(llm!.requests[1]!.body.messages[1]!.content)).not.toContain('drink"');
  });

  it('invalidates a contradicted memory: kept with validTo, no longer recalled', async () => {
    await memories.save({ key: 'car', content: 'The user owns a grey Volvo V60.', ...scope });
    const { extractor } = await extractorWith(
      extractionScript(json({ facts: [{ content: 'The user no longer owns a car.' }] }), (request) => {
        const shown = shownMemories(request).find((m) => m.content.includes('Volvo'))!;
        return json({ decisions: [{ fact: 0, event: 'INVALIDATE', id: shown.id }] });
      }),
    );
    const result = await extractor.extract({ messages: conversation('I sold the Volvo, no car now.'), scope, source });
    expect(result.decisions[0]).toMatchObject({ event: 'INVALIDATE', status: 'applied', key: 'car' });
    expect((await memories.get('car', scope))?.validTo).toBeInstanceOf(Date);
    expect((await memories.search('Volvo car', { ...scope, mode: 'text' })).map((h) => h.memory.key)).not.toContain('car');
    expect((await memories.history('car', scope)).at(-1)).toMatchObject({ event: 'invalidated', actor: { type: 'extraction', ...source } });
  });

  it('writes nothing for garbage output, a failing model or an invented id, and counts each', async () => {
    const count = async () => (await memories.list({ ...scope, includeInvalid: true, limit: 200 })).items.length;
    const before = await count();
    const malformedBefore = await counter('memrag_memory_extraction_failures_total', { reason: 'malformed_output' });

    const garbage = await extractorWith(() => reply.text('Sure! Here are the facts: the user likes tea.'));
    expect(await garbage.extractor.extract({ messages: conversation('I like tea'), scope, source })).toEqual({ decisions: [], failures: 1 });
    expect(garbage.failures).toEqual(['malformed_output']);
    await llm!.close();

    const failing = await extractorWith(() => reply.error(500, { message: 'model crashed' }));
    expect(await failing.extractor.extract({ messages: conversation('I like tea'), scope, source })).toEqual({ decisions: [], failures: 1 });
    expect(failing.failures).toEqual(['llm_error']);
    await llm!.close();

    const invented = await extractorWith(
      extractionScript(json({ facts: ['The user likes oolong tea.', 'The user lives in Graz.'] }), () =>
        json({
          decisions: [
            { fact: 0, event: 'UPDATE', id: 999, content: 'x' },
            { fact: 1, event: 'REWRITE' },
            { fact: 7, event: 'ADD' },
          ],
        }),
      ),
    );
    const result = await invented.extractor.extract({ messages: conversation('Oolong is my tea, and I live in Graz.'), scope, source });
    expect(result.decisions).toEqual([
      expect.objectContaining({ event: 'UPDATE', status: 'skipped', reason: 'unknown memory id 999' }),
      expect.objectContaining({ event: 'NONE', status: 'skipped', fact: 'The user lives in Graz.', reason: 'the model gave no decision' }),
    ]);
    expect(invented.failures.sort()).toEqual(['malformed_output', 'unknown_fact', 'unknown_id']);
    expect(await count()).toBe(before);
    expect(await counter('memrag_memory_extraction_failures_total', { reason: 'malformed_output' })).toBe(malformedBefore + 2);
  });

  it("quotes the user's words each memory is drawn from, never the assistant's, and keeps the valid time the user named", async () => {
    const user = 'I worked at Acme   Corp until June 2022. These days I teach.';
    const { extractor } = await extractorWith(
      extractionScript(
        json({
          facts: [
            { content: 'The user worked at Acme Corp until June 2022.', quote: 'i worked at acme corp until june 2022', validUntil: '2022-06-30' },
            // The assistant's words, claimed as the user's: the user's own sentence is quoted instead.
            { content: 'The user teaches.', quote: 'Teaching is a fine job', validFrom: 'recently' },
          ],
        }),
        () =>
          json({
            decisions: [
              { fact: 0, event: 'ADD' },
              { fact: 1, event: 'ADD' },
            ],
          }),
      ),
    );
    const messages = [
      { role: 'user' as const, content: user },
      { role: 'assistant' as const, content: 'Teaching is a fine job.' },
    ];
    const result = await extractor.extract({ messages, scope, source, at: new Date('2024-03-05T10:00:00Z') });
    expect(result.decisions.map((d) => d.status)).toEqual(['applied', 'applied']);
    // Read as of a moment it held: it no longer does.
    const [acme, teach] = await Promise.all(result.decisions.map((d) => memories.get(d.key!, scope, { validAt: new Date('2021-01-01T00:00:00Z') })));
    expect(await memories.get(result.decisions[0]!.key!, scope)).toBeNull();
    expect(acme).toMatchObject({ validFrom: null, validUntil: new Date('2022-06-30T00:00:00Z') });
    expect(acme!.sources).toEqual([
      { actor: 'extraction', ...source, quote: { text: 'I worked at Acme   Corp until June 2022', start: 0, end: 39 }, at: expect.any(Date) },
    ]);
    expect(teach).toMatchObject({ validFrom: null, validUntil: null });
    expect(teach!.sources[0]!.quote).toEqual({ text: 'These days I teach.', start: 41, end: 60 });
    for (const memory of [acme!, teach!])
      expect(user.slice(memory.sources[0]!.quote!.start, memory.sources[0]!.quote!.end)).toBe(memory.sources[0]!.quote!.text);
    // Relative times are read against the conversation's date.
    expect(String(llm!.requests[0]!.body.messages[1]!.content)).toContain('<conversation date="2024-03-05">');
  });

  it("gives an update the quote of the fact that caused it, and its valid time over the memory's", async () => {
    await memories.save({ key: 'home', content: 'The user lives in Lisbon.', validFrom: new Date('2015-01-01T00:00:00Z'), ...scope });
    const { extractor } = await extractorWith(
      extractionScript(
        json({ facts: [{ content: 'The user has lived in Porto since March 2023.', quote: 'Porto since March 2023', validFrom: '2023-03' }] }),
        (request) => {
          const shown = shownMemories(request).find((m) => m.content.includes('Lisbon'))!;
          return json({ decisions: [{ fact: 0, event: 'UPDATE', id: shown.id, content: 'The user lives in Porto.' }] });
        },
      ),
    );
    const user = 'We left Lisbon: Porto since March 2023!';
    const result = await extractor.extract({ messages: conversation(user), scope, source });
    expect(result.decisions[0]).toMatchObject({ event: 'UPDATE', status: 'applied', key: 'home' });
    const home = await memories.get('home', scope);
    expect(home).toMatchObject({ content: 'The user lives in Porto.', validFrom: new Date('2023-03-01T00:00:00Z'), validUntil: null });
    expect(home!.sources.at(-1)).toMatchObject({ actor: 'extraction', ...source, quote: { text: 'Porto since March 2023', start: 16, end: 38 } });
  });

  it('throws ExtractionStepError for a failed model request when asked to (a job retries it), writing nothing', async () => {
    const count = async () => (await memories.list({ ...scope, includeInvalid: true, limit: 200 })).items.length;
    const before = await count();
    const failing = await extractorWith(() => reply.error(500, { message: 'model crashed' }));
    await expect(failing.extractor.extract({ messages: conversation('I like tea'), scope, source, failOnModelError: true })).rejects.toMatchObject({
      name: 'ExtractionStepError',
      reason: 'llm_error',
    });
    await llm!.close();

    const garbled = await extractorWith(extractionScript(json({ facts: ['The user likes rooibos.'] }), () => reply.text('I would add it.')));
    const error = await garbled.extractor.extract({ messages: conversation('I like rooibos'), scope, source, failOnModelError: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExtractionStepError);
    expect(error).toMatchObject({ reason: 'malformed_output' });
    expect(await count()).toBe(before);
    await llm!.close();

    // One unusable decision among good ones is skipped and counted, not a failed request.
    const partial = await extractorWith(
      extractionScript(json({ facts: ['The user likes mate.'] }), () =>
        json({
          decisions: [
            { fact: 0, event: 'ADD' },
            { fact: 0, event: 'REWRITE' },
          ],
        }),
      ),
    );
    const result = await partial.extractor.extract({ messages: conversation('I like mate'), scope, source, failOnModelError: true });
    expect(result).toMatchObject({ failures: 1, decisions: [{ event: 'ADD', status: 'applied' }] });
    expect(await count()).toBe(before + 1);
  });

  it('times out a slow model and writes nothing', async () => {
    const { extractor, failures } = await extractorWith(() => reply.text('{"facts": []}', { delayMs: 2_000 }), 200);
    expect(await extractor.extract({ messages: conversation('Anything'), scope, source })).toEqual({ decisions: [], failures: 1 });
    expect(failures).toEqual(['timeout']);
  });
});
