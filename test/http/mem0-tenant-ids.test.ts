import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { mem0MemoryId } from '../../src/portability/mem0-memories.js';
import { createApp, createTestContext } from './http-test-context.js';

const ALPHA_KEY = 'alpha-mem0-ids-key-0123456789';
const BETA_KEY = 'beta-mem0-ids-key-0123456789';
const MEM0_ID = '5b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d';

describe('memory ids of Mem0 imports', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await createTestContext({ API_KEYS: `alpha:${ALPHA_KEY},beta:${BETA_KEY}` });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  const send = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const importAs = (key: string, memory: string) =>
    send(key, 'POST', '/v1/import?format=mem0', [{ id: MEM0_ID, memory, user_id: 'olga', created_at: '2025-03-01T10:00:00Z' }]);
  // Memory ids show in an export (and its history events), not in the API's memory replies.
  const idIn = async (key: string) => {
    const res = await app.request('/v1/export?userId=olga', { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const lines = (await res.text())
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, any>);
    const memories = lines.filter((l) => l.type === 'memory');
    expect(memories).toHaveLength(1);
    expect(memories[0]!.history.map((e: { memoryId: string }) => e.memoryId)).toEqual([memories[0]!.id]);
    return memories[0]!.id as string;
  };

  it('gives the same Mem0 id two memory ids in two tenants, so the second tenant cannot tell the first imported it', async () => {
    expect((await importAs(ALPHA_KEY, 'Olga keeps bees')).body).toMatchObject({ imported: { memories: 1 }, errors: [] });
    expect((await importAs(BETA_KEY, 'Olga keeps goats')).body).toMatchObject({ imported: { memories: 1 }, errors: [] });
    const alphaId = await idIn(ALPHA_KEY);
    const betaId = await idIn(BETA_KEY);
    expect(betaId).not.toBe(alphaId);
    // Beta's id is the one it gets whether or not alpha imported first: nothing of alpha shows in it.
    expect(alphaId).toBe(mem0MemoryId('alpha', MEM0_ID));
    expect(betaId).toBe(mem0MemoryId('beta', MEM0_ID));
  });

  it('finds the memory again on a second import into the same tenant', async () => {
    expect((await importAs(BETA_KEY, 'Olga keeps goats')).body).toMatchObject({ imported: { memories: 0 }, skipped: 1, errors: [] });
    expect(await idIn(BETA_KEY)).toBe(mem0MemoryId('beta', MEM0_ID));
  });
});
