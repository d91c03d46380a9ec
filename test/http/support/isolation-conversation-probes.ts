import { expect } from 'vitest';
import { createLlmProvider } from '../../../src/llm/llm-provider.js';
import { reply, startScriptedLlmServer } from '../../../testkit/scripted-llm-server.js';
import { createApp } from '../http-test-context.js';
import { ALPHA_ENV_KEY, ALPHA_IMAGE_URL, type TenantIsolationFixture } from './tenant-isolation-fixture.js';

/** Beta's attempts at alpha's chats, models, conversations and turns. Each runs between two snapshots of alpha's state. */
export function conversationProbes(f: TenantIsolationFixture): Record<string, () => Promise<void>> {
  const { ctx, app, betaKey, alpha, beta, as, seeded, expectNothingOfAlpha, expectNotFound } = f;
  return {
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
        const withLlm = as(() => createApp({ ...ctx(), llm }), betaKey());
        const res = await withLlm('POST', '/v1/chat', { message: 'What is the vault code?' });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.toolCalls.map((t: { name: string }) => t.name)).toEqual(['search_memories', 'search_knowledge', 'delete_memory']);
        expect(res.body.toolCalls[2].result).toContain('"deleted":false');
        expectNothingOfAlpha(res, 'chat tools');
        // Neither the recalled sources nor the tool results the model read hold anything of alpha's.
        expectNothingOfAlpha({ status: 200, headers: res.headers, body: server.requests.map((r) => r.body.messages) }, 'LLM prompts');
        await ctx().backgroundTasks.whenIdle();
      } finally {
        await server.close();
      }
    },
    'POST /v1/chat/completions': async () => {
      const completion = (headers: Record<string, string>, body: Record<string, unknown>) =>
        app().request('/v1/chat/completions', {
          method: 'POST',
          headers: { authorization: `Bearer ${betaKey()}`, 'content-type': 'application/json', ...headers },
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
    'GET /v1/conversations/:id/attachments/:attachmentId': async () => {
      const path = `/v1/conversations/${seeded.conversationId}/attachments/${seeded.attachmentId}`;
      expectNotFound(await beta('GET', path), "alpha's attachment");
      // Through a conversation of beta's own, holding the same image (stored apart: hashes are per tenant).
      const own = await beta('POST', '/v1/chat', {
        message: [
          { type: 'text', text: 'Beta sends the same picture' },
          { type: 'image_url', image_url: { url: ALPHA_IMAGE_URL } },
        ],
      });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      expectNotFound(
        await beta('GET', `/v1/conversations/${own.body.conversationId}/attachments/${seeded.attachmentId}`),
        "alpha's attachment via beta's conversation",
      );
      const betaImage = (await beta('GET', `/v1/conversations/${own.body.conversationId}`)).body.messages[0].metadata.images[0].attachmentId;
      expect(betaImage).not.toBe(seeded.attachmentId);
      expect((await app().request(path, { headers: { authorization: `Bearer ${ALPHA_ENV_KEY}` } })).status).toBe(200);
      await ctx().backgroundTasks.whenIdle();
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
      await ctx().backgroundTasks.whenIdle();
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
  };
}
