import { inspectRoutes } from 'hono/dev';
import { describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../src/auth/api-key-store.js';
import type { DatabaseDriver } from '../support/database-drivers.js';
import { blockProbes } from './support/isolation-block-probes.js';
import { conversationProbes } from './support/isolation-conversation-probes.js';
import { documentAndJobProbes } from './support/isolation-document-probes.js';
import { keyAndExportProbes } from './support/isolation-key-export-probes.js';
import { memoryProbes } from './support/isolation-memory-probes.js';
import { runAndAgentProbes } from './support/isolation-run-agent-probes.js';
import { workflowProbes } from './support/isolation-workflow-probes.js';
import { ALPHA_DOCUMENT, ALPHA_ENV_KEY, ALPHA_MEMORY, useTenantIsolationFixture } from './support/tenant-isolation-fixture.js';

/**
 * Tenant isolation over HTTP, on every `/v1` route: tenant `alpha` (a key from API_KEYS) holds
 * memories, a document and a conversation; tenant `beta` (a key from the `api_keys` table) must
 * not read, list, search, change or delete any of it. The route list comes from the app itself,
 * so a route added without a probe here fails the suite. Run by describeOnDrivers.
 */
export function tenantIsolationSuite(driver: DatabaseDriver) {
  describe('tenant isolation over HTTP', () => {
    const f = useTenantIsolationFixture(driver);
    const { alpha, beta, as, seeded, ctx, app, alphaState } = f;

    /**
     * One probe per route: beta's attempts at alpha's data, by id and by search. Each runs
     * between two snapshots of alpha's state, which must be equal.
     */
    const probes: Record<string, () => Promise<void>> = {
      ...memoryProbes(f),
      ...conversationProbes(f),
      ...runAndAgentProbes(f),
      ...workflowProbes(f),
      ...blockProbes(f),
      ...documentAndJobProbes(f),
      // Last: its import probe leaves data in beta (of beta's own words), which the probes above do not expect.
      ...keyAndExportProbes(f),
    };

    it('has an isolation probe for every /v1 route the app registers, and no stale one', () => {
      const routes = new Set(
        inspectRoutes(app())
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
      const search = ctx().search.forTenant('beta');
      const [vector] = await ctx().embedder.embed([ALPHA_DOCUMENT]);
      const noTags = { tagsAny: [], tagsAll: [], tagsNone: [] };
      const candidates = [...(await search.vectorCandidates(vector!, noTags, 1000)), ...(await search.textCandidates(ALPHA_DOCUMENT, noTags, 1000))];
      expect(candidates.filter((c) => seeded.chunkIds.includes(c.id))).toEqual([]);
      const own = ctx().search.forTenant('alpha');
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
      const second = await createApiKey(ctx().database.db, { tenantId: 'alpha', name: 'second alpha key' });
      const alphaTable = as(() => app(), second.key);
      // A table key and an env key of one tenant see the same data.
      expect((await alphaTable('GET', '/v1/memories/alpha-secret')).body.memory.content).toBe(ALPHA_MEMORY);
      expect(await revokeApiKey(ctx().database.db, second.prefix)).toMatchObject({ status: 'revoked' });
      const refused = await alphaTable('GET', '/v1/memories/alpha-secret');
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ code: 'unauthorized', message: 'The API key is not valid' });
      expect((await alpha('GET', '/v1/memories/alpha-secret')).status).toBe(200);
      for (const headers of [{}, { authorization: 'Bearer not-a-key' }, { authorization: `Basic ${ALPHA_ENV_KEY}` }] as Record<string, string>[]) {
        const res = await app().request('/v1/memories/alpha-secret', { headers });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="memrag"/);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      }
    });
  });
}
