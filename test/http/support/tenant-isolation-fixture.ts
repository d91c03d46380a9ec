import type { Hono } from 'hono';
import { afterAll, beforeAll, expect } from 'vitest';
import { createLlmProvider } from '../../../src/llm/llm-provider.js';
import type { AppContext } from '../../../src/app-context.js';
import { createApiKey } from '../../../src/auth/api-key-store.js';
import { reply, startScriptedLlmServer } from '../../../testkit/scripted-llm-server.js';
import type { DatabaseDriver } from '../../support/database-drivers.js';
import { readSse } from '../../support/sse-reader.js';
import { type JsonReply, createApp, createTestContext } from '../http-test-context.js';

/** A 1×1 PNG alpha sends in its seeded chat. */
export const ALPHA_IMAGE_URL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
export const ALPHA_ENV_KEY = 'alpha-env-key-0123456789';
/** The key of the deployment's one provider: the same for every tenant, and in no reply to any. */
export const PROVIDER_KEY = 'deployment-provider-key-0123456789';

// Words only tenant alpha's data contains: any of them in a reply to tenant beta is a leak.
export const ALPHA_MEMORY = 'The vault code is zanzibarite 4417';
export const ALPHA_DOCUMENT = [
  '# Pterosaur field notes',
  '',
  'The quetzalcoatlus migration crosses the giant pterosaur valley every spring.',
  '',
  '## Feeding',
  '',
  'Each quetzalcoatlus eats fish from the vault lake at dawn.',
].join('\n');
export const ALPHA_WORDS = ['zanzibarite', 'quetzalcoatlus', 'alpha-only', 'Alpha keeps'];
// Alpha's user with data, and the user alpha erased (named on alpha's audit log only).
export const ALPHA_USER = 'alpha-user';
export const ALPHA_ERASED_USER = 'alpha-erased-user';

export type Caller = (method: string, path: string, body?: unknown) => Promise<JsonReply>;

export type TenantIsolationFixture = ReturnType<typeof useTenantIsolationFixture>;

/**
 * Tenant `alpha` (a key from API_KEYS) holds memories, a document, a conversation, runs, an agent,
 * a user and jobs; tenant `beta` holds a key from the `api_keys` table. Registers the suite's hooks,
 * so call it inside the suite's `describe`; its accessors read what the hooks set up.
 */
export function useTenantIsolationFixture(driver: DatabaseDriver) {
  let ctx: AppContext | undefined;
  let app: Hono;
  let release: (() => Promise<void>) | undefined;
  let alpha: Caller;
  let beta: Caller;
  let betaKey: string;
  const seeded = {
    documentId: '',
    chunkIds: [] as string[],
    conversationId: '',
    exported: undefined as any,
    runId: '',
    pausedRunId: '',
    /** Alpha's run paused mid-turn (`POST /v1/runs/:id/pause`), waiting for its resume. */
    stoppedRunId: '',
    jobId: '',
    batchId: '',
    attachmentId: '',
  };

  const as =
    (target: () => Hono, key: string): Caller =>
    async (method, path, body) => {
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      const init: RequestInit = { method, headers };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        headers['content-type'] = 'application/json';
      }
      const res = await target().request(path, init);
      const text = await res.text();
      const parsed = text && res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as unknown) : text;
      return { status: res.status, headers: res.headers, body: parsed };
    };

  beforeAll(async () => {
    const opened = await driver.provision();
    release = () => opened.release();
    // No cache: a revocation must show on the very next request here (caching has its own test).
    // A provider on a port nothing listens on: the models probe must not need it.
    const LLM_PROVIDERS = JSON.stringify({ shared: { baseURL: 'http://127.0.0.1:9/v1', apiKey: PROVIDER_KEY } });
    ctx = await createTestContext({ ...opened.env, API_KEYS: `alpha:${ALPHA_ENV_KEY}`, API_KEY_CACHE_MS: '0', LLM_PROVIDERS });
    app = createApp(ctx);
    betaKey = (await createApiKey(ctx.database.db, { tenantId: 'beta', name: 'isolation suite' })).key;
    alpha = as(() => app, ALPHA_ENV_KEY);
    beta = as(() => app, betaKey);

    const ok = (res: JsonReply) => {
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      return res;
    };
    ok(await alpha('PUT', '/v1/memories/alpha-secret', { content: ALPHA_MEMORY, tags: ['alpha-only', 'shared-tag'] }));
    ok(await alpha('PUT', '/v1/memories/alpha-bob?agentId=bob', { content: 'Bob of alpha also knows zanzibarite', tags: ['alpha-only'] }));
    ok(await alpha('PUT', '/v1/memories/alpha-delete-probe', { content: 'A zanzibarite note nobody else may delete', tags: ['alpha-only'] }));
    ok(await alpha('PUT', '/v1/memories/shared-key', { content: 'Alpha keeps green tea under the shared key' }));
    ok(await beta('PUT', '/v1/memories/shared-key', { content: 'Beta stores coffee beans under the shared key' }));
    const ingested = ok(
      await alpha('POST', '/v1/documents', {
        title: 'Alpha field notes',
        text: ALPHA_DOCUMENT,
        format: 'markdown',
        tags: ['alpha-only'],
        source: 'wiki://alpha',
      }),
    );
    seeded.documentId = ingested.body.document.id;
    seeded.chunkIds = (await alpha('GET', `/v1/documents/${seeded.documentId}/chunks`)).body.items.map((c: { id: string }) => c.id);
    // Extractive (no LLM): the turn is still stored, with alpha's memory cited.
    // With an image, which the conversation keeps as an attachment of alpha's.
    const chat = ok(
      await alpha('POST', '/v1/chat', {
        message: [
          { type: 'text', text: 'What is the vault code zanzibarite?' },
          { type: 'image_url', image_url: { url: ALPHA_IMAGE_URL } },
        ],
      }),
    );
    seeded.conversationId = chat.body.conversationId;
    seeded.attachmentId = ok(await alpha('GET', `/v1/conversations/${seeded.conversationId}`)).body.messages[0].metadata.images[0].attachmentId;
    seeded.runId = chat.body.runId;
    // A run of alpha's waiting for a client tool's output.
    const pausing = await startScriptedLlmServer([reply.toolCalls([{ id: 'alpha-call', name: 'alpha_tool', arguments: '{}' }])]);
    try {
      const llm = createLlmProvider({ baseURL: pausing.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } });
      const paused = ok(
        await as(() => createApp({ ...ctx!, llm }), ALPHA_ENV_KEY)('POST', '/v1/chat', {
          message: 'Where is the zanzibarite vault?',
          tools: [{ type: 'function', function: { name: 'alpha_tool', description: 'Alpha keeps this tool' } }],
        }),
      );
      expect(paused.body.status).toBe('requires_action');
      seeded.pausedRunId = paused.body.runId;
    } finally {
      await pausing.close();
    }
    // A run of alpha's paused mid-turn: its tool call held until the pause is asked for, so that the
    // turn stops before its next model call.
    let releaseReply!: () => void;
    const held = new Promise<void>((resolve) => (releaseReply = resolve));
    const search = { id: 'alpha-search', name: 'search_memories', arguments: '{"query":"zanzibarite"}' };
    const stopping = await startScriptedLlmServer([reply.toolCalls([search], { holdUntil: held })]);
    try {
      const llm = createLlmProvider({ baseURL: stopping.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } });
      const stoppingApp = createApp({ ...ctx, llm });
      const res = await stoppingApp.request('/v1/chat', {
        method: 'POST',
        headers: { authorization: `Bearer ${ALPHA_ENV_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Pause before the zanzibarite answer', stream: true }),
      });
      const stream = readSse(res);
      seeded.stoppedRunId = ((await stream.until('retrieval')).data as { runId: string }).runId;
      ok(await as(() => stoppingApp, ALPHA_ENV_KEY)('POST', `/v1/runs/${seeded.stoppedRunId}/pause`));
      releaseReply();
      expect((await stream.all()).at(-1)?.event).toBe('paused');
    } finally {
      releaseReply();
      await stopping.close();
    }
    await ctx.backgroundTasks.whenIdle();
    seeded.exported = ok(await alpha('GET', `/v1/conversations/${seeded.conversationId}/export`)).body;
    ok(await alpha('POST', '/v1/agents', { id: 'alpha-agent', name: 'Alpha keeps this agent', instructions: 'Mention zanzibarite.' }));
    ok(await alpha('PATCH', '/v1/agents/alpha-agent', { instructions: 'Mention zanzibarite twice.' }));
    const workflow = { name: 'Alpha zanzibarite flow', entry: 'a', nodes: [{ id: 'a', agentId: 'alpha-agent', prompt: 'Zanzibarite: {{input}}' }] };
    ok(await alpha('POST', '/v1/workflows', { id: 'alpha-workflow', ...workflow }));
    ok(await alpha('PATCH', '/v1/workflows/alpha-workflow', { name: 'Alpha zanzibarite flow, renamed' }));
    // Working memory of alpha's agent, and that agent's view of a user.
    ok(await alpha('PUT', '/v1/blocks/alpha-notes', { agentId: 'alpha-agent', value: 'Alpha keeps zanzibarite notes' }));
    ok(await alpha('PUT', '/v1/blocks/alpha-notes', { agentId: 'alpha-agent', userId: 'alpha-block-user', value: 'Zanzibarite user notes' }));
    // A user of alpha's (under an agent of its own, out of the other reads' way) and an erasure on alpha's audit log.
    ok(await alpha('PUT', '/v1/memories/alpha-user-note?agentId=erase-probe', { content: 'The alpha user knows zanzibarite', userId: ALPHA_USER }));
    ok(await alpha('POST', '/v1/chat', { message: 'Is zanzibarite a vault code?', agentId: 'erase-probe', userId: ALPHA_USER }));
    ok(await alpha('DELETE', `/v1/users/${ALPHA_ERASED_USER}`));
    // A job of alpha's that ended (its document is alpha's seeded one: same text) and a batch.
    seeded.jobId = ok(await alpha('POST', '/v1/documents', { title: 'Alpha field notes', text: ALPHA_DOCUMENT, format: 'markdown', async: true })).body.job.id;
    seeded.batchId = ok(
      await alpha('POST', '/v1/documents', { documents: [{ text: ALPHA_DOCUMENT, format: 'markdown', source: 'wiki://alpha' }] }),
    ).body.job.id;
    for (const id of [seeded.jobId, seeded.batchId]) {
      for (let i = 0; i < 400 && !['succeeded', 'failed'].includes((await alpha('GET', `/v1/jobs/${id}`)).body.job.status); i++)
        await new Promise((r) => setTimeout(r, 25));
    }
  });
  afterAll(async () => {
    await ctx?.backgroundTasks.whenIdle();
    await ctx?.close();
    await release?.();
  });

  /** Everything alpha can see; compared before and after each of beta's requests. */
  async function alphaState() {
    const get = async (path: string) => {
      const res = await alpha('GET', path);
      expect(res.status, path).toBe(200);
      return res.body;
    };
    const state = {
      memories: await get('/v1/memories?limit=200'),
      bobMemories: await get('/v1/memories?agentId=bob&limit=200'),
      tags: await get('/v1/tags'),
      documents: await get('/v1/documents'),
      document: await get(`/v1/documents/${seeded.documentId}`),
      chunks: await get(`/v1/documents/${seeded.documentId}/chunks`),
      conversations: await get('/v1/conversations'),
      conversation: await get(`/v1/conversations/${seeded.conversationId}`),
      // A search, but a read: alpha's stored turn, as episodic recall finds it.
      turns: (await alpha('POST', '/v1/turns/search', { query: 'vault code zanzibarite', mode: 'text', topK: 50 })).body,
      agents: await get('/v1/agents'),
      agent: await get('/v1/agents/alpha-agent'),
      agentVersions: await get('/v1/agents/alpha-agent/versions'),
      workflows: await get('/v1/workflows'),
      workflow: await get('/v1/workflows/alpha-workflow'),
      workflowVersions: await get('/v1/workflows/alpha-workflow/versions'),
      blocks: await get('/v1/blocks?agentId=alpha-agent'),
      userBlocks: await get('/v1/blocks?agentId=alpha-agent&userId=alpha-block-user'),
      blockHistory: await get('/v1/blocks/alpha-notes/history?agentId=alpha-agent'),
      run: await get(`/v1/runs/${seeded.runId}`),
      pausedRun: await get(`/v1/runs/${seeded.pausedRunId}`),
      stoppedRun: await get(`/v1/runs/${seeded.stoppedRunId}`),
      jobs: await get('/v1/jobs'),
      job: await get(`/v1/jobs/${seeded.jobId}`),
      batch: await get(`/v1/jobs/${seeded.batchId}`),
      userMemories: await get(`/v1/memories?agentId=erase-probe&userId=${ALPHA_USER}`),
      userConversations: await get(`/v1/conversations?agentId=erase-probe&userId=${ALPHA_USER}`),
      // Less alpha's own exports (the import probe reads one, as alpha): those are alpha's doing.
      audit: { items: (await get('/v1/audit')).items.filter((e: { action: string }) => e.action !== 'tenant.exported') },
    };
    expect(state.jobs.items.map((j: { id: string }) => j.id)).toEqual(expect.arrayContaining([seeded.jobId, seeded.batchId]));
    expect(state.job.job.status).toBe('succeeded');
    expect(state.userMemories.items.map((m: { key: string }) => m.key)).toEqual(['alpha-user-note']);
    expect(state.userConversations.items).toHaveLength(1);
    expect(state.blocks.blocks.map((b: { value: string }) => b.value)).toEqual(['Alpha keeps zanzibarite notes']);
    expect(state.userBlocks.blocks).toHaveLength(1);
    expect(state.audit.items.map((e: { userId: string }) => e.userId)).toEqual([ALPHA_ERASED_USER]);
    // Alpha sees its own data on each read route: a route serving some fixed tenant would not.
    expect(state.memories.items.map((m: { key: string }) => m.key).sort()).toEqual(['alpha-delete-probe', 'alpha-secret', 'shared-key']);
    expect(state.bobMemories.items.map((m: { key: string }) => m.key)).toEqual(['alpha-bob']);
    expect(state.tags.tags).toEqual(
      expect.arrayContaining([
        { tag: 'alpha-only', count: 2 },
        { tag: 'shared-tag', count: 1 },
      ]),
    );
    expect(state.documents.items.map((d: { id: string }) => d.id)).toEqual([seeded.documentId]);
    expect(state.conversations.items.map((c: { id: string }) => c.id)).toEqual([seeded.conversationId]);
    expect(state.turns.hits.map((h: { conversationId: string }) => h.conversationId)).toEqual([seeded.conversationId]);
    expect(state.agents.items.map((a: { id: string }) => a.id)).toEqual(['alpha-agent']);
    expect(state.agentVersions.items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(state.pausedRun).toMatchObject({ status: 'requires_action', requiredAction: { toolCalls: [{ id: 'alpha-call' }] } });
    expect(state.stoppedRun).toMatchObject({ status: 'paused', followUps: [] });
    return state;
  }

  /** Nothing of alpha's in a reply to beta: neither its words nor its ids. */
  function expectNothingOfAlpha(res: JsonReply, what: string) {
    const text = JSON.stringify(res.body);
    for (const word of [...ALPHA_WORDS, PROVIDER_KEY, seeded.documentId, seeded.conversationId, ...seeded.chunkIds, seeded.jobId, seeded.batchId]) {
      expect(text.includes(word), `${what}: the reply to beta contains ${JSON.stringify(word)}: ${text.slice(0, 500)}`).toBe(false);
    }
  }

  /**
   * Beta's export holds nothing of alpha's. Its conversations are checked by id only: beta
   * imported a copy of alpha's conversation export itself (the conversation import probe), whose
   * words are beta's own from then on.
   */
  async function expectBetaExportClean(query: string): Promise<string> {
    const res = await app.request(`/v1/export${query}`, { headers: { authorization: `Bearer ${betaKey}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    const records = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { type: string; conversation?: { id: string } });
    expectNothingOfAlpha({ status: res.status, headers: res.headers, body: records.filter((r) => r.type !== 'conversation') }, `export ${query}`);
    expect(text.includes(seeded.conversationId), `export ${query}`).toBe(false);
    return text;
  }

  function expectNotFound(res: JsonReply, what: string) {
    expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  }

  return {
    ctx: () => ctx!,
    app: () => app,
    betaKey: () => betaKey,
    alpha: ((method, path, body) => alpha(method, path, body)) as Caller,
    beta: ((method, path, body) => beta(method, path, body)) as Caller,
    as,
    seeded,
    alphaState,
    expectNothingOfAlpha,
    expectBetaExportClean,
    expectNotFound,
  };
}
