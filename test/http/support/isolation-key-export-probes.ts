import { expect } from 'vitest';
import { createApiKey, revokeApiKey } from '../../../src/auth/api-key-store.js';
import { ALPHA_ENV_KEY, ALPHA_USER, type TenantIsolationFixture } from './tenant-isolation-fixture.js';

/** Beta's attempts at alpha's keys, and at alpha's data through export and import. Each runs between two snapshots of alpha's state. */
export function keyAndExportProbes(f: TenantIsolationFixture): Record<string, () => Promise<void>> {
  const { ctx, app, betaKey, beta, as, seeded, expectNothingOfAlpha, expectBetaExportClean, expectNotFound } = f;
  return {
    'GET /v1/keys': async () => {
      const alphaKey = await createApiKey(ctx().database.db, { tenantId: 'alpha', name: 'alpha key beta must not list' });
      try {
        const res = await beta('GET', '/v1/keys');
        expect(res.status).toBe(200);
        expect(res.body.items.map((k: { tenantId: string }) => k.tenantId)).toEqual(res.body.items.map(() => 'beta'));
        const text = JSON.stringify(res.body);
        expect(text.includes(alphaKey.id) || text.includes(alphaKey.prefix), text).toBe(false);
      } finally {
        await revokeApiKey(ctx().database.db, alphaKey.id);
      }
    },
    'DELETE /v1/keys/:id': async () => {
      const alphaKey = await createApiKey(ctx().database.db, { tenantId: 'alpha', name: 'alpha key beta must not revoke' });
      try {
        expectNotFound(await beta('DELETE', `/v1/keys/${alphaKey.id}`), 'key revocation');
        expect((await as(() => app(), alphaKey.key)('GET', '/v1/tags')).status).toBe(200);
      } finally {
        await revokeApiKey(ctx().database.db, alphaKey.id);
      }
    },
    'POST /v1/keys': async () => {
      const foreign = await beta('POST', '/v1/keys', { tenantId: 'alpha', scopes: ['read'] });
      expect(foreign.status).toBe(403);
      expect(foreign.body.error.code).toBe('forbidden');
      const own = await beta('POST', '/v1/keys', { scopes: ['read'] });
      expect(own.status).toBe(201);
      expect(own.body.apiKey.tenantId).toBe('beta');
      const made = as(() => app(), own.body.key);
      expectNothingOfAlpha(await made('GET', '/v1/memories?limit=200'), 'memories read with a key beta made');
      await revokeApiKey(ctx().database.db, own.body.apiKey.id);
    },
    'GET /v1/export': async () => {
      for (const query of ['', '?agentId=bob', `?userId=${ALPHA_USER}`, `?agentId=erase-probe&userId=${ALPHA_USER}`, '?agentId=alpha-agent']) {
        await expectBetaExportClean(query);
      }
    },
    // Last: it leaves data in beta (of beta's own words), which the probes above do not expect.
    'POST /v1/import': async () => {
      // Alpha's memory id and conversation id in a file of beta's words: written to beta, under ids of beta's own.
      const exported = await (await app().request('/v1/export', { headers: { authorization: `Bearer ${ALPHA_ENV_KEY}` } })).text();
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
      const res = await app().request('/v1/import', {
        method: 'POST',
        headers: { authorization: `Bearer ${betaKey()}`, 'content-type': 'application/x-ndjson' },
        body: file,
      });
      const body = (await res.json()) as { imported: Record<string, number> };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ imported: { memories: 1, conversations: 1, agents: 1 }, errors: [] });
      expectNothingOfAlpha({ status: res.status, headers: res.headers, body }, 'import');
      expect(await expectBetaExportClean('')).not.toContain(alphaMemory.id);
    },
  };
}
