import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../src/app-context.js';
import { loadConfig } from '../src/config/config.js';
import { createHashEmbedder } from '../testkit/hash-embedder.js';

describe('createAppContext', () => {
  // The firewall's classifier embeds only with the model it was trained on: the hash embedder stands in for it.
  const model = createHashEmbedder(512, 'bundled:use-lite');
  const embedded: string[] = [];
  let ctx: AppContext;
  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' });
    ctx = await createAppContext(config, {
      embedder: {
        ...model,
        embed: (texts, options) => {
          embedded.push(...texts);
          return model.embed(texts, options);
        },
      },
    });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('runs the model once for a memory the firewall screens before it is stored', async () => {
    const content = 'The quarterly report is due on the first Monday of April.';
    const { memory } = await ctx.memories.forTenant('default').save({ key: 'report', content, actor: { type: 'extraction' } });
    expect(memory.status).toBe('active');
    expect(embedded.filter((text) => text === content)).toHaveLength(1);
    // And it is found by that vector.
    const hits = await ctx.memories.forTenant('default').search(content, { mode: 'vector', topK: 1 });
    expect(hits[0]?.memory.key).toBe('report');
  });
});
