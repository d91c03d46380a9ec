import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { SUPER_LINEAR, describeGrowth, timedGrowthAsync } from '../support/growth-ratio.js';
import { call, clearConversations, clearMemories, createApp, createTestContext } from './http-test-context.js';

let ctx: AppContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

describe('one chat stalls every tenant: a no-LLM chat recalling a 60 KB memory is quadratic', () => {
  it('answers in time linear in the recalled memory, from 12.5 KB to 100 KB (the largest memory)', async () => {
    const app = createApp({ ...ctx, llm: undefined });
    const growth = await timedGrowthAsync(
      async (lines) => {
        const key = `zebra-${lines}`;
        await ctx.memories.forTenant('default').save({ key, content: 'zebra\n'.repeat(lines), tags: [key] });
        return key;
      },
      async (key) => {
        // Each size on its own: the other sizes' memories would be recalled and read too.
        const res = await call(app, 'POST', '/v1/chat', { message: 'zebra zebra?', tagsAny: [key] });
        expect(res.status).toBe(200);
        expect(res.body.citations).toEqual([expect.objectContaining({ kind: 'memory', key })]);
        // The turn is indexed after the reply, on the same thread: its cost is the chat's too.
        await ctx.backgroundTasks.whenIdle();
        await clearConversations(ctx);
        return res;
      },
      { base: 2080, baseline: 1 },
    );
    expect(growth.perDoubling, describeGrowth(growth)).toBeLessThan(SUPER_LINEAR);
    await clearConversations(ctx);
    await clearMemories(ctx);
  });
});
