import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { VectorSpaceMismatchError } from '../../src/db/vector-space.js';
import type { LlmProvider } from '../../src/llm/llm-provider.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

describe('createAppContext', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'memrag-ctx-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('persists in DATA_DIR, and refuses an embedder of another vector space', async () => {
    const first = await createAppContext(config, { embedder: createHashEmbedder(64) });
    expect(first.database.driver).toBe('pglite');
    await first.memories.forTenant('default').save({ key: 'k', content: 'kept on disk' });
    await first.close();
    await first.close(); // idempotent

    const other = createHashEmbedder(32);
    let closedOther = false;
    other.close = async () => {
      closedOther = true;
    };
    await expect(createAppContext(config, { embedder: other })).rejects.toBeInstanceOf(VectorSpaceMismatchError);
    // The embedder stays the caller's when the context could not be built.
    expect(closedOther).toBe(false);

    // The failed attempt closed its database: the directory opens again.
    const again = await createAppContext(config, { embedder: createHashEmbedder(64) });
    try {
      expect(await again.memories.forTenant('default').get('k')).toMatchObject({ content: 'kept on disk' });
    } finally {
      await again.close();
    }
  });

  it('builds the memory extractors once: the chat extracts through the same ones as the route', async () => {
    const reply = async () => ({
      message: { role: 'assistant' as const, content: '{"facts":[]}', toolCalls: [] },
      usage: { promptTokens: 1, completionTokens: 1 },
      finishReason: 'stop',
    });
    const llm: LlmProvider = { model: 'scripted', complete: reply, stream: reply };
    const ctx = await createAppContext(loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'on' }), {
      embedder: createHashEmbedder(64),
      llm,
    });
    try {
      const asked: string[] = [];
      const extractors = ctx.extractors!;
      const forTenant = extractors.forTenant.bind(extractors);
      extractors.forTenant = (tenantId) => (asked.push(tenantId), forTenant(tenantId));
      await ctx.chat.forTenant('acme').chat({ message: 'I moved to Lisbon last year.', agentId: 'alice' });
      await ctx.backgroundTasks.whenIdle();
      // The turn's extraction is a job the context's workers run.
      const jobs = ctx.jobs.forTenant('acme');
      for (let i = 0; i < 400 && (await jobs.list({ kind: 'extraction', limit: 1 })).items[0]?.status !== 'succeeded'; i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(asked).toEqual(['acme']);
    } finally {
      await ctx.close();
    }
  });
});

// Regression: the metrics wrapper around the embedder dropped `countTokens`, so documents were
// chunked by the estimate instead of the model's tokenizer.
describe('createAppContext and the embedder tokenizer', () => {
  it('chunks documents with the embedder countTokens', async () => {
    const counted: string[] = [];
    const embedder = createHashEmbedder(16);
    const ctx = await createAppContext(loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent' }), {
      embedder: { ...embedder, embed: embedder.embed, countTokens: (text: string) => (counted.push(text), text.split(/\s+/).length) },
    });
    try {
      await ctx.documents.forTenant('default').ingest({ title: 'Pumps', content: 'Prime the pump with water before starting it.', format: 'text' });
      expect(counted.length).toBeGreaterThan(0);
    } finally {
      await ctx.close();
    }
  });
});
