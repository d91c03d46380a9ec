import type { Hono } from 'hono';
import { inspectRoutes } from 'hono/dev';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import type { AppContext } from '../../src/app-context.js';
import { createApiKey, revokeApiKey } from '../../src/auth/api-key-store.js';
import { reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import type { DatabaseDriver } from '../support/database-drivers.js';
import { type JsonReply, createApp, createTestContext } from './http-test-context.js';

const ALPHA_ENV_KEY = 'alpha-env-key-0123456789';

// Words only tenant alpha's data contains: any of them in a reply to tenant beta is a leak.
const ALPHA_MEMORY = 'The vault code is zanzibarite 4417';
const ALPHA_DOCUMENT = [
  '# Pterosaur field notes',
  '',
  'The quetzalcoatlus migration crosses the giant pterosaur valley every spring.',
  '',
  '## Feeding',
  '',
  'Each quetzalcoatlus eats fish from the vault lake at dawn.',
].join('\n');
const ALPHA_WORDS = ['zanzibarite', 'quetzalcoatlus', 'alpha-only', 'Alpha keeps'];
// Alpha's user with data, and the user alpha erased (named on alpha's audit log only).
const ALPHA_USER = 'alpha-user';
const ALPHA_ERASED_USER = 'alpha-erased-user';

type Caller = (method: string, path: string, body?: unknown) => Promise<JsonReply>;

/**
 * Tenant isolation over HTTP, on every `/v1` route: tenant `alpha` (a key from API_KEYS) holds
 * memories, a document and a conversation; tenant `beta` (a key from the `api_keys` table) must
 * not read, list, search, change or delete any of it. The route list comes from the app itself,
 * so a route added without a probe here fails the suite. Run by describeOnDrivers.
 */
export function tenantIsolationSuite(driver: DatabaseDriver) {
  describe('tenant isolation over HTTP', () => {
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
      jobId: '',
      batchId: '',
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
      ctx = await createTestContext({ ...opened.env, API_KEYS: `alpha:${ALPHA_ENV_KEY}`, API_KEY_CACHE_MS: '0' });
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
      const chat = ok(await alpha('POST', '/v1/chat', { message: 'What is the vault code zanzibarite?' }));
      seeded.conversationId = chat.body.conversationId;
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
      await ctx.backgroundTasks.whenIdle();
      seeded.exported = ok(await alpha('GET', `/v1/conversations/${seeded.conversationId}/export`)).body;
      ok(await alpha('POST', '/v1/agents', { id: 'alpha-agent', name: 'Alpha keeps this agent', instructions: 'Mention zanzibarite.' }));
      ok(await alpha('PATCH', '/v1/agents/alpha-agent', { instructions: 'Mention zanzibarite twice.' }));
      // A user of alpha's (under an agent of its own, out of the other reads' way) and an erasure on alpha's audit log.
      ok(await alpha('PUT', '/v1/memories/alpha-user-note?agentId=erase-probe', { content: 'The alpha user knows zanzibarite', userId: ALPHA_USER }));
      ok(await alpha('POST', '/v1/chat', { message: 'Is zanzibarite a vault code?', agentId: 'erase-probe', userId: ALPHA_USER }));
      ok(await alpha('DELETE', `/v1/users/${ALPHA_ERASED_USER}`));
      // A job of alpha's that ended (its document is alpha's seeded one: same text) and a batch.
      seeded.jobId = ok(
        await alpha('POST', '/v1/documents', { title: 'Alpha field notes', text: ALPHA_DOCUMENT, format: 'markdown', async: true }),
      ).body.job.id;
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
        run: await get(`/v1/runs/${seeded.runId}`),
        pausedRun: await get(`/v1/runs/${seeded.pausedRunId}`),
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
      return state;
    }

    /** Nothing of alpha's in a reply to beta: neither its words nor its ids. */
    function expectNothingOfAlpha(res: JsonReply, what: string) {
      const text = JSON.stringify(res.body);
      for (const word of [...ALPHA_WORDS, seeded.documentId, seeded.conversationId, ...seeded.chunkIds, seeded.jobId, seeded.batchId]) {
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

    /**
     * One probe per route: beta's attempts at alpha's data, by id and by search. Each runs
     * between two snapshots of alpha's state, which must be equal.
     */
    const probes: Record<string, () => Promise<void>> = {
      'POST /v1/memories/search': async () => {
        for (const mode of ['hybrid', 'vector', 'text']) {
          for (const agentId of ['default', 'bob']) {
            const res = await beta('POST', '/v1/memories/search', { query: ALPHA_MEMORY, mode, agentId, topK: 50 });
            expect(res.status).toBe(200);
            expectNothingOfAlpha(res, `memory search (${mode}, ${agentId})`);
          }
        }
        const tagged = await beta('POST', '/v1/memories/search', { query: 'zanzibarite vault code', tagsAny: ['alpha-only'] });
        expect(tagged.body.hits).toEqual([]);
      },
      'POST /v1/memories': async () => {
        const res = await beta('POST', '/v1/memories', { key: 'alpha-secret', content: 'Beta writes its own secret', agentId: 'bob' });
        // Beta's own new memory under the same key, not alpha's replaced.
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ created: true, memory: { content: 'Beta writes its own secret' } });
      },
      'GET /v1/memories/:key': async () => {
        expectNotFound(await beta('GET', '/v1/memories/alpha-delete-probe'), 'get by key');
        expectNotFound(await beta('GET', '/v1/memories/alpha-bob?agentId=bob'), 'get by key (bob)');
        const shared = await beta('GET', '/v1/memories/shared-key');
        expect(shared.body.memory.content).toBe('Beta stores coffee beans under the shared key');
      },
      'PUT /v1/memories/:key': async () => {
        const res = await beta('PUT', '/v1/memories/alpha-secret', { content: 'Beta notes, nothing else', tags: ['beta'] });
        expect(res.status).toBe(201);
        expect(res.body.created).toBe(true);
        expectNothingOfAlpha(res, 'put');
      },
      'PATCH /v1/memories/:key': async () => {
        expectNotFound(await beta('PATCH', '/v1/memories/alpha-delete-probe', { content: 'Beta rewrites it' }), 'patch by key');
        expectNotFound(await beta('PATCH', '/v1/memories/alpha-bob?agentId=bob', { addTags: ['beta'] }), 'patch by key (bob)');
      },
      'POST /v1/memories/batch': async () => {
        // A user scope no other probe reads: beta's own memory must not shadow alpha's in a later probe.
        const res = await beta('POST', '/v1/memories/batch', { memories: [{ key: 'alpha-delete-probe', userId: 'beta-user', content: 'Beta batch note' }] });
        // Beta's own new memory under the same key, not alpha's replaced.
        expect(res.status).toBe(200);
        expect(res.body.results[0]).toMatchObject({ created: true, memory: { content: 'Beta batch note' } });
      },
      'POST /v1/memories/extract': async () => {
        // A fact that matches alpha's memory word for word: beta's extraction is shown beta's
        // memories only (the model's prompt holds nothing of alpha's), and what it adds is beta's.
        const server = await startScriptedLlmServer([
          reply.text(JSON.stringify({ facts: [{ content: 'The vault code is a number' }] })),
          reply.text(JSON.stringify({ decisions: [{ fact: 0, event: 'UPDATE', id: 0, content: 'Beta overwrites memory 0' }] })),
        ]);
        try {
          const llm = createLlmProvider({ baseURL: server.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } });
          const withLlm = as(() => createApp({ ...ctx!, llm }), betaKey);
          // An agent beta holds nothing for: id 0 names no memory there, alpha's least of all.
          const res = await withLlm('POST', '/v1/memories/extract', {
            messages: [{ role: 'user', content: 'What is the vault code?' }],
            agentId: 'extract-probe',
          });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          expect(res.body.decisions[0]).toMatchObject({ event: 'UPDATE', status: 'skipped', reason: 'unknown memory id 0' });
          expectNothingOfAlpha(res, 'extract');
          expectNothingOfAlpha({ status: 200, headers: res.headers, body: server.requests.map((r) => r.body.messages) }, 'extraction prompts');
        } finally {
          await server.close();
        }
      },
      'GET /v1/memories/:key/history': async () => {
        expectNotFound(await beta('GET', '/v1/memories/alpha-delete-probe/history'), 'history');
        expectNotFound(await beta('GET', '/v1/memories/alpha-bob/history?agentId=bob'), 'history (bob)');
      },
      'POST /v1/memories/:key/approve': async () => {
        expectNotFound(await beta('POST', '/v1/memories/alpha-delete-probe/approve'), 'approve');
        expectNotFound(await beta('POST', '/v1/memories/alpha-bob/approve?agentId=bob'), 'approve (bob)');
      },
      'DELETE /v1/memories/:key': async () => {
        expectNotFound(await beta('DELETE', '/v1/memories/alpha-delete-probe'), 'delete by key');
        expectNotFound(await beta('DELETE', '/v1/memories/alpha-bob?agentId=bob'), 'delete by key (bob)');
      },
      'GET /v1/memories': async () => {
        for (const query of ['', '?agentId=bob', '?tagsAny=alpha-only', '?limit=200']) {
          const res = await beta('GET', `/v1/memories${query}`);
          expect(res.status).toBe(200);
          expectNothingOfAlpha(res, `list ${query}`);
        }
      },
      'DELETE /v1/memories': async () => {
        for (const agentId of ['default', 'bob']) {
          const res = await beta('DELETE', `/v1/memories?tagsAny=alpha-only,shared-tag&agentId=${agentId}`);
          expect(res.status).toBe(200);
          expect(res.body).toEqual({ deleted: 0 });
        }
      },
      'GET /v1/tags': async () => {
        for (const query of ['', '?agentId=bob']) {
          const res = await beta('GET', `/v1/tags${query}`);
          expect(res.status).toBe(200);
          expect(res.body.tags.map((t: { tag: string }) => t.tag)).not.toContain('shared-tag');
          expectNothingOfAlpha(res, `tags ${query}`);
        }
      },
      'POST /v1/chat': async () => {
        // Continuing alpha's conversation: a 404 before anything runs, streamed or not.
        expectNotFound(await beta('POST', '/v1/chat', { message: 'And then?', conversationId: seeded.conversationId }), 'chat continuation');
        expectNotFound(await beta('POST', '/v1/chat', { message: 'And then?', conversationId: seeded.conversationId, stream: true }), 'streamed continuation');
        // Recall (extractive): words alpha's memory and document share with the question find nothing.
        const recalled = await beta('POST', '/v1/chat', { message: 'What is the vault code? Where does the giant pterosaur migration cross?' });
        expect(recalled.status).toBe(200);
        expectNothingOfAlpha(recalled, 'chat recall');
        // Tools: what the model asks for stays inside beta, whatever it asks.
        const server = await startScriptedLlmServer([
          reply.toolCalls([
            { id: 't1', name: 'search_memories', arguments: JSON.stringify({ query: 'vault code', topK: 20 }) },
            { id: 't2', name: 'search_knowledge', arguments: JSON.stringify({ query: 'giant pterosaur migration', topK: 20 }) },
            { id: 't3', name: 'delete_memory', arguments: JSON.stringify({ key: 'alpha-delete-probe' }) },
          ]),
          reply.text('Nothing of the kind here.'),
        ]);
        try {
          const llm = createLlmProvider({ baseURL: server.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } });
          const withLlm = as(() => createApp({ ...ctx!, llm }), betaKey);
          const res = await withLlm('POST', '/v1/chat', { message: 'What is the vault code?' });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          expect(res.body.toolCalls.map((t: { name: string }) => t.name)).toEqual(['search_memories', 'search_knowledge', 'delete_memory']);
          expect(res.body.toolCalls[2].result).toContain('"deleted":false');
          expectNothingOfAlpha(res, 'chat tools');
          // Neither the recalled sources nor the tool results the model read hold anything of alpha's.
          expectNothingOfAlpha({ status: 200, headers: res.headers, body: server.requests.map((r) => r.body.messages) }, 'LLM prompts');
          await ctx!.backgroundTasks.whenIdle();
        } finally {
          await server.close();
        }
      },
      'POST /v1/chat/completions': async () => {
        const completion = (headers: Record<string, string>, body: Record<string, unknown>) =>
          app.request('/v1/chat/completions', {
            method: 'POST',
            headers: { authorization: `Bearer ${betaKey}`, 'content-type': 'application/json', ...headers },
            body: JSON.stringify({ model: 'memrag', ...body }),
          });
        // Continuing alpha's conversation by header: a 404 before anything runs, in OpenAI's shape.
        const continued = await completion({ 'X-Memrag-Conversation-Id': seeded.conversationId }, { messages: [{ role: 'user', content: 'And then?' }] });
        expect(continued.status).toBe(404);
        expect(((await continued.json()) as { error: { code: string; type: string } }).error).toMatchObject({
          code: 'not_found',
          type: 'invalid_request_error',
        });
        // Alpha's agent is no model of beta's.
        const agent = await completion({}, { model: 'memrag:alpha-agent', messages: [{ role: 'user', content: 'Hi' }] });
        expect(agent.status).toBe(404);
        // Recall (extractive): alpha's memories and documents stay out of beta's answer.
        const recalled = await completion(
          {},
          { messages: [{ role: 'user', content: 'What is the vault code? Where does the giant pterosaur migration cross?' }] },
        );
        expect(recalled.status).toBe(200);
        expectNothingOfAlpha({ status: 200, headers: recalled.headers, body: await recalled.json() }, 'completion recall');
      },
      'GET /v1/models': async () => {
        const res = await beta('GET', '/v1/models');
        expect(res.status).toBe(200);
        expect(res.body.data.map((m: { id: string }) => m.id)).not.toContain('memrag:alpha-agent');
      },
      'GET /v1/models/:model': async () => {
        const res = await beta('GET', '/v1/models/memrag:alpha-agent');
        expect(res).toMatchObject({ status: 404, body: { error: { code: 'model_not_found' } } });
      },
      'GET /v1/conversations': async () => {
        for (const query of ['', '?agentId=bob', '?limit=200']) {
          const res = await beta('GET', `/v1/conversations${query}`);
          expect(res.status).toBe(200);
          expectNothingOfAlpha(res, `conversation list ${query}`);
        }
      },
      'POST /v1/conversations/import': async () => {
        // Beta uploads a history under alpha's conversation id: stored as beta's, under a new id.
        const exported = structuredClone(seeded.exported);
        for (const m of exported.messages) if (typeof m.content === 'string') m.content = 'Beta text.';
        for (const c of exported.checkpoints) Object.assign(c, { question: 'Beta text.', summary: 'Beta text.', actionableSummary: 'Beta text.' });
        exported.conversation.title = 'Beta import';
        const res = await beta('POST', '/v1/conversations/import', exported);
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        expect(res.body.conversation.id).not.toBe(seeded.conversationId);
        expect(res.body.importedFrom).toBe(seeded.conversationId);
        expectNotFound(await alpha('GET', `/v1/conversations/${res.body.conversation.id}`), "alpha reading beta's import");
      },
      'GET /v1/conversations/:id': async () => {
        expectNotFound(await beta('GET', `/v1/conversations/${seeded.conversationId}`), 'conversation by id');
        expectNotFound(await beta('GET', `/v1/conversations/${seeded.conversationId}?agentId=bob`), 'conversation by id (bob)');
      },
      'GET /v1/conversations/:id/export': async () => {
        expectNotFound(await beta('GET', `/v1/conversations/${seeded.conversationId}/export`), 'export');
      },
      'DELETE /v1/conversations/:id': async () => {
        expectNotFound(await beta('DELETE', `/v1/conversations/${seeded.conversationId}`), 'conversation delete');
      },
      'POST /v1/conversations/:id/turns': async () => {
        // Recording into alpha's conversation: a 404, and nothing added to it.
        expectNotFound(
          await beta('POST', `/v1/conversations/${seeded.conversationId}/turns`, { user: 'Beta asks.', assistant: 'Beta text.' }),
          'turn recorded into alpha',
        );
        // Under a new id, the turn is beta's: alpha finds neither the conversation nor the turn.
        const res = await beta('POST', `/v1/conversations/${crypto.randomUUID()}/turns`, { user: 'Where is the beta vault?', assistant: 'Beta text.' });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        await ctx!.backgroundTasks.whenIdle();
        expectNotFound(await alpha('GET', `/v1/conversations/${res.body.conversationId}`), "alpha reading beta's recorded turn");
        const searched = await alpha('POST', '/v1/turns/search', { query: 'Where is the beta vault?', conversationId: res.body.conversationId });
        expect(searched.body.hits).toEqual([]);
      },
      'POST /v1/turns/search': async () => {
        for (const mode of ['hybrid', 'vector', 'text']) {
          for (const agentId of ['default', 'bob']) {
            const res = await beta('POST', '/v1/turns/search', {
              query: 'What is the vault code zanzibarite? The vault code is zanzibarite 4417',
              mode,
              agentId,
              topK: 50,
            });
            expect(res.status).toBe(200);
            expectNothingOfAlpha(res, `turn search (${mode}, ${agentId})`);
          }
          // By alpha's conversation id: nothing, not even whether it exists.
          const byId = await beta('POST', '/v1/turns/search', { query: 'vault code zanzibarite', mode, conversationId: seeded.conversationId });
          expect(byId.body.hits).toEqual([]);
          // Grouped by conversation, and as of a later moment: still nothing of alpha's.
          const grouped = await beta('POST', '/v1/turns/search', {
            query: 'vault code zanzibarite',
            mode,
            groupBy: 'conversation',
            asOf: '2100-01-01T00:00:00Z',
            topK: 50,
          });
          expect(grouped.status).toBe(200);
          expectNothingOfAlpha(grouped, `turn search by conversation (${mode})`);
        }
      },
      'GET /v1/runs/:runId': async () => {
        for (const id of [seeded.runId, seeded.pausedRunId]) expectNotFound(await beta('GET', `/v1/runs/${id}`), 'run by id');
      },
      'POST /v1/runs/:runId/tool-outputs': async () => {
        expectNotFound(
          await beta('POST', `/v1/runs/${seeded.pausedRunId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'alpha-call', output: 'beta' }] }),
          'tool outputs',
        );
        expectNotFound(
          await beta('POST', `/v1/runs/${seeded.pausedRunId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'alpha-call', output: 'beta' }], stream: true }),
          'streamed tool outputs',
        );
      },
      'POST /v1/runs/:runId/approvals': async () => {
        expectNotFound(
          await beta('POST', `/v1/runs/${seeded.pausedRunId}/approvals`, { decisions: [{ toolCallId: 'alpha-call', approve: true }] }),
          'approvals',
        );
      },
      'POST /v1/runs/:runId/cancel': async () => {
        for (const id of [seeded.runId, seeded.pausedRunId]) expectNotFound(await beta('POST', `/v1/runs/${id}/cancel`), 'run cancel');
      },
      'GET /v1/runs/:runId/events': async () => {
        expectNotFound(await beta('GET', `/v1/runs/${seeded.pausedRunId}/events`), 'run events');
      },
      'POST /v1/agents': async () => {
        // Alpha's id: beta's own agent under it, not a 409 that would tell beta the id is taken.
        const res = await beta('POST', '/v1/agents', { id: 'alpha-agent', name: 'Beta agent' });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        expect(res.body).toMatchObject({ id: 'alpha-agent', version: 1, name: 'Beta agent' });
        expectNothingOfAlpha(res, 'agent create');
        expect((await beta('DELETE', '/v1/agents/alpha-agent')).status).toBe(204);
      },
      'GET /v1/agents': async () => {
        for (const query of ['', '?limit=200']) {
          const res = await beta('GET', `/v1/agents${query}`);
          expect(res.status).toBe(200);
          expect(res.body.items.map((a: { id: string }) => a.id)).not.toContain('alpha-agent');
          expectNothingOfAlpha(res, `agent list ${query}`);
        }
      },
      'GET /v1/agents/:id': async () => {
        expectNotFound(await beta('GET', '/v1/agents/alpha-agent'), 'agent by id');
      },
      'PATCH /v1/agents/:id': async () => {
        expectNotFound(await beta('PATCH', '/v1/agents/alpha-agent', { name: 'Beta renames it', instructions: null }), 'agent patch');
      },
      'DELETE /v1/agents/:id': async () => {
        expectNotFound(await beta('DELETE', '/v1/agents/alpha-agent'), 'agent delete');
      },
      'GET /v1/agents/:id/versions': async () => {
        expectNotFound(await beta('GET', '/v1/agents/alpha-agent/versions'), 'agent versions');
      },
      'GET /v1/agents/:id/versions/:version': async () => {
        for (const version of [1, 2]) expectNotFound(await beta('GET', `/v1/agents/alpha-agent/versions/${version}`), `agent version ${version}`);
      },
      'POST /v1/documents': async () => {
        // Alpha's source: a document of beta's own, not a replacement of alpha's.
        const res = await beta('POST', '/v1/documents', { title: 'Beta page', text: 'Beta keeps its own page here.', source: 'wiki://alpha' });
        expect(res.status).toBe(201);
        expect(res.body.status).toBe('created');
        expect(res.body.document.id).not.toBe(seeded.documentId);
      },
      'GET /v1/documents': async () => {
        for (const query of ['', '?tagsAny=alpha-only', '?limit=200']) {
          const res = await beta('GET', `/v1/documents${query}`);
          expect(res.status).toBe(200);
          expectNothingOfAlpha(res, `document list ${query}`);
        }
      },
      'GET /v1/documents/:id': async () => {
        expectNotFound(await beta('GET', `/v1/documents/${seeded.documentId}`), 'document by id');
      },
      'GET /v1/documents/:id/chunks': async () => {
        expectNotFound(await beta('GET', `/v1/documents/${seeded.documentId}/chunks`), 'chunks');
      },
      'DELETE /v1/documents/:id': async () => {
        expectNotFound(await beta('DELETE', `/v1/documents/${seeded.documentId}`), 'document delete');
      },
      'GET /v1/jobs': async () => {
        for (const query of ['', '?status=succeeded', '?limit=200', '?kind=ingest', '?kind=batch', '?kind=batch&status=succeeded', '?kind=extraction']) {
          const res = await beta('GET', `/v1/jobs${query}`);
          expect(res.status).toBe(200);
          expectNothingOfAlpha(res, `job list ${query}`);
        }
      },
      'GET /v1/jobs/:id': async () => {
        for (const id of [seeded.jobId, seeded.batchId]) expectNotFound(await beta('GET', `/v1/jobs/${id}`), 'job by id');
      },
      'GET /v1/jobs/:id/events': async () => {
        for (const id of [seeded.jobId, seeded.batchId]) expectNotFound(await beta('GET', `/v1/jobs/${id}/events`), 'job events');
      },
      'POST /v1/jobs/:id/cancel': async () => {
        for (const id of [seeded.jobId, seeded.batchId]) expectNotFound(await beta('POST', `/v1/jobs/${id}/cancel`), 'job cancel');
      },
      'POST /v1/jobs/:id/retry': async () => {
        for (const id of [seeded.jobId, seeded.batchId]) expectNotFound(await beta('POST', `/v1/jobs/${id}/retry`), 'job retry');
      },
      'DELETE /v1/users/:userId': async () => {
        // Alpha's user, by name: beta erases its own (none), nothing of alpha's.
        const res = await beta('DELETE', `/v1/users/${ALPHA_USER}`);
        expect(res.status).toBe(200);
        expect(Object.values(res.body.erased).every((n) => n === 0)).toBe(true);
        expectNothingOfAlpha(res, 'user erasure');
      },
      'GET /v1/audit': async () => {
        for (const query of ['', `?userId=${ALPHA_ERASED_USER}`, '?limit=200']) {
          const res = await beta('GET', `/v1/audit${query}`);
          expect(res.status).toBe(200);
          const text = JSON.stringify(res.body);
          // Neither the user alpha erased nor alpha's key.
          expect(text.includes(ALPHA_ERASED_USER), text).toBe(false);
          expect(text.includes('env:1'), text).toBe(false);
          expectNothingOfAlpha(res, `audit ${query}`);
        }
      },
      'POST /v1/search': async () => {
        for (const mode of ['hybrid', 'vector', 'text']) {
          for (const reranker of ['none', 'lexical']) {
            const res = await beta('POST', '/v1/search', { query: ALPHA_DOCUMENT, mode, reranker, topK: 50 });
            expect(res.status).toBe(200);
            expectNothingOfAlpha(res, `document search (${mode}, ${reranker})`);
          }
        }
      },
      'GET /v1/keys': async () => {
        const alphaKey = await createApiKey(ctx!.database.db, { tenantId: 'alpha', name: 'alpha key beta must not list' });
        try {
          const res = await beta('GET', '/v1/keys');
          expect(res.status).toBe(200);
          expect(res.body.items.map((k: { tenantId: string }) => k.tenantId)).toEqual(res.body.items.map(() => 'beta'));
          const text = JSON.stringify(res.body);
          expect(text.includes(alphaKey.id) || text.includes(alphaKey.prefix), text).toBe(false);
        } finally {
          await revokeApiKey(ctx!.database.db, alphaKey.id);
        }
      },
      'DELETE /v1/keys/:id': async () => {
        const alphaKey = await createApiKey(ctx!.database.db, { tenantId: 'alpha', name: 'alpha key beta must not revoke' });
        try {
          expectNotFound(await beta('DELETE', `/v1/keys/${alphaKey.id}`), 'key revocation');
          expect((await as(() => app, alphaKey.key)('GET', '/v1/tags')).status).toBe(200);
        } finally {
          await revokeApiKey(ctx!.database.db, alphaKey.id);
        }
      },
      'POST /v1/keys': async () => {
        const foreign = await beta('POST', '/v1/keys', { tenantId: 'alpha', scopes: ['read'] });
        expect(foreign.status).toBe(403);
        expect(foreign.body.error.code).toBe('forbidden');
        const own = await beta('POST', '/v1/keys', { scopes: ['read'] });
        expect(own.status).toBe(201);
        expect(own.body.apiKey.tenantId).toBe('beta');
        const made = as(() => app, own.body.key);
        expectNothingOfAlpha(await made('GET', '/v1/memories?limit=200'), 'memories read with a key beta made');
        await revokeApiKey(ctx!.database.db, own.body.apiKey.id);
      },
      'GET /v1/export': async () => {
        for (const query of ['', '?agentId=bob', `?userId=${ALPHA_USER}`, `?agentId=erase-probe&userId=${ALPHA_USER}`, '?agentId=alpha-agent']) {
          await expectBetaExportClean(query);
        }
      },
      // Last: it leaves data in beta (of beta's own words), which the probes above do not expect.
      'POST /v1/import': async () => {
        // Alpha's memory id and conversation id in a file of beta's words: written to beta, under ids of beta's own.
        const exported = await (await app.request('/v1/export', { headers: { authorization: `Bearer ${ALPHA_ENV_KEY}` } })).text();
        const alphaMemory = exported
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l))
          .find((l) => l.type === 'memory' && l.key === 'alpha-secret');
        const at = new Date().toISOString();
        const { format: _format, version: _version, ...conversation } = seeded.exported;
        const file = [
          { type: 'header', format: 'memrag.export', version: 1, exportedAt: at, scope: {} },
          // A key of its own: beta may hold `alpha-secret` already (the PUT probe), and would skip it.
          { ...alphaMemory, key: 'beta-imported-secret', content: 'Beta imports words of its own', tags: [], metadata: {}, history: [] },
          {
            ...conversation,
            type: 'conversation',
            conversation: { ...conversation.conversation, title: 'Beta title' },
            messages: [{ seq: 1, turn: 1, role: 'user', content: 'Beta asks its own question' }],
            checkpoints: [],
            summary: null,
          },
          { type: 'agent', id: 'beta-imported', version: 1, settings: { name: 'Beta agent' }, createdAt: at, updatedAt: at, versions: [] },
        ]
          .map((l) => JSON.stringify(l))
          .join('\n');
        const res = await app.request('/v1/import', {
          method: 'POST',
          headers: { authorization: `Bearer ${betaKey}`, 'content-type': 'application/x-ndjson' },
          body: file,
        });
        const body = (await res.json()) as { imported: Record<string, number> };
        expect(res.status, JSON.stringify(body)).toBe(200);
        expect(body).toMatchObject({ imported: { memories: 1, conversations: 1, agents: 1 }, errors: [] });
        expectNothingOfAlpha({ status: res.status, headers: res.headers, body }, 'import');
        expect(await expectBetaExportClean('')).not.toContain(alphaMemory.id);
      },
    };

    it('has an isolation probe for every /v1 route the app registers, and no stale one', () => {
      const routes = new Set(
        inspectRoutes(app)
          .filter((r) => !r.isMiddleware && r.path.startsWith('/v1/'))
          .map((r) => `${r.method} ${r.path}`),
      );
      expect(routes.size).toBeGreaterThan(15);
      expect(
        [...routes].filter((r) => !(r in probes)),
        'routes without an isolation probe',
      ).toEqual([]);
      expect(
        Object.keys(probes).filter((p) => !routes.has(p)),
        'probes of routes that no longer exist',
      ).toEqual([]);
    });

    for (const [route, probe] of Object.entries(probes)) {
      it(`${route}: tenant beta neither sees nor changes tenant alpha's data`, async () => {
        const before = await alphaState();
        await probe();
        expect(await alphaState()).toEqual(before);
      });
    }

    it('confines the candidate queries themselves (vector scan and BM25) to the tenant, not just the hits', async () => {
      // Hits are read back per tenant too, so a leaking candidate query would only show as missing
      // hits; asked directly, it must not return alpha's chunks at all.
      const search = ctx!.search.forTenant('beta');
      const [vector] = await ctx!.embedder.embed([ALPHA_DOCUMENT]);
      const noTags = { tagsAny: [], tagsAll: [], tagsNone: [] };
      const candidates = [...(await search.vectorCandidates(vector!, noTags, 1000)), ...(await search.textCandidates(ALPHA_DOCUMENT, noTags, 1000))];
      expect(candidates.filter((c) => seeded.chunkIds.includes(c.id))).toEqual([]);
      const own = ctx!.search.forTenant('alpha');
      expect((await own.textCandidates('quetzalcoatlus', noTags, 1000)).map((c) => c.id).sort()).toEqual([...seeded.chunkIds].sort());
    });

    it('keeps one memory per tenant under the same key', async () => {
      expect((await alpha('GET', '/v1/memories/shared-key')).body.memory.content).toBe('Alpha keeps green tea under the shared key');
      expect((await beta('GET', '/v1/memories/shared-key')).body.memory.content).toBe('Beta stores coffee beans under the shared key');
    });

    it('makes two documents of identical content ingested by two tenants', async () => {
      const res = await beta('POST', '/v1/documents', { title: 'Beta copy', text: ALPHA_DOCUMENT, format: 'markdown' });
      // Not `unchanged` with alpha's document: the content hash is unique per tenant only.
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('created');
      expect(res.body.document.id).not.toBe(seeded.documentId);
      expect(res.body.document.contentHash).toBe((await alpha('GET', `/v1/documents/${seeded.documentId}`)).body.document.contentHash);
      const again = await beta('POST', '/v1/documents', { title: 'Beta copy', text: ALPHA_DOCUMENT, format: 'markdown' });
      expect(again.body).toMatchObject({ status: 'unchanged', document: { id: res.body.document.id } });
      // Each tenant's search finds its own copy only.
      const alphaHits = (await alpha('POST', '/v1/search', { query: 'quetzalcoatlus migration', topK: 50 })).body.hits;
      const betaHits = (await beta('POST', '/v1/search', { query: 'quetzalcoatlus migration', topK: 50 })).body.hits;
      expect(new Set(alphaHits.map((h: { documentId: string }) => h.documentId))).toEqual(new Set([seeded.documentId]));
      const betaDocuments = betaHits.map((h: { documentId: string }) => h.documentId);
      expect(betaDocuments[0]).toBe(res.body.document.id);
      expect(betaDocuments).not.toContain(seeded.documentId);
    });

    it("leaves tenant alpha's BM25 scores unchanged when tenant beta writes", async () => {
      const scores = async () => ({
        memories: (await alpha('POST', '/v1/memories/search', { query: 'zanzibarite vault code', mode: 'text', topK: 50 })).body.hits.map(
          (h: { memory: { key: string }; score: number }) => [h.memory.key, h.score],
        ),
        chunks: (await alpha('POST', '/v1/search', { query: 'quetzalcoatlus pterosaur vault', mode: 'text', topK: 50 })).body.hits.map(
          (h: { chunkId: string; score: number }) => [h.chunkId, h.score],
        ),
      });
      const before = await scores();
      expect(before.memories.length).toBeGreaterThan(0);
      expect(before.chunks.length).toBeGreaterThan(0);
      // Beta's corpus grows with alpha's query terms: shared statistics would move alpha's idf and average length.
      for (let i = 0; i < 6; i++) {
        expect((await beta('PUT', `/v1/memories/bm25-${i}`, { content: `zanzibarite vault code ${'filler '.repeat(i * 5)}` })).status).toBe(201);
        const text = `Quetzalcoatlus pterosaur vault ${i}. ${'Long filler sentence about nothing. '.repeat(i * 3)}`;
        expect((await beta('POST', '/v1/documents', { title: `Beta ${i}`, text })).status).toBe(201);
      }
      expect(await scores()).toEqual(before);
      // And beta's own text search ranks beta's memories by beta's statistics.
      const betaHits = (await beta('POST', '/v1/memories/search', { query: 'zanzibarite vault code', mode: 'text', topK: 50 })).body.hits;
      expect(betaHits.map((h: { memory: { key: string } }) => h.memory.key).sort()).toEqual(['bm25-0', 'bm25-1', 'bm25-2', 'bm25-3', 'bm25-4', 'bm25-5']);
    });

    it("refuses a revoked key with 401, while the tenant's other keys go on working", async () => {
      const second = await createApiKey(ctx!.database.db, { tenantId: 'alpha', name: 'second alpha key' });
      const alphaTable = as(() => app, second.key);
      // A table key and an env key of one tenant see the same data.
      expect((await alphaTable('GET', '/v1/memories/alpha-secret')).body.memory.content).toBe(ALPHA_MEMORY);
      expect(await revokeApiKey(ctx!.database.db, second.prefix)).toMatchObject({ status: 'revoked' });
      const refused = await alphaTable('GET', '/v1/memories/alpha-secret');
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ code: 'unauthorized', message: 'The API key is not valid' });
      expect((await alpha('GET', '/v1/memories/alpha-secret')).status).toBe(200);
      for (const headers of [{}, { authorization: 'Bearer not-a-key' }, { authorization: `Basic ${ALPHA_ENV_KEY}` }] as Record<string, string>[]) {
        const res = await app.request('/v1/memories/alpha-secret', { headers });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="memrag"/);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      }
    });
  });
}
