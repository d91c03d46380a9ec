import { expect } from 'vitest';
import { createLlmProvider } from '../../../src/llm/llm-provider.js';
import { reply, startScriptedLlmServer } from '../../../testkit/scripted-llm-server.js';
import { createApp } from '../http-test-context.js';
import { ALPHA_MEMORY, type TenantIsolationFixture } from './tenant-isolation-fixture.js';

/** Beta's attempts at alpha's memories and tags, by key and by search. Each runs between two snapshots of alpha's state. */
export function memoryProbes(f: TenantIsolationFixture): Record<string, () => Promise<void>> {
  const { ctx, betaKey, beta, as, expectNothingOfAlpha, expectNotFound } = f;
  return {
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
        const withLlm = as(() => createApp({ ...ctx(), llm }), betaKey());
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
  };
}
