import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { VectorSpaceMismatchError } from '../../src/db/vector-space.js';
import { configuredEmbedder } from '../../src/embeddings/create-embedder.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { BUNDLED_STATIC_MODEL_DIRS } from '../../src/embeddings/static-model-files.js';
import { NEW_STORE_PROVIDER, providerForStore } from '../../src/embeddings/store-default-provider.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/static-embedder/', import.meta.url));

describe('the embedder of a store, with EMBEDDING_PROVIDER unset', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'memrag-store-embedder-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("is the model that embedded the store, and the new stores' default for a new one", () => {
    expect(providerForStore(null)).toBe(NEW_STORE_PROVIDER);
    expect(providerForStore('bundled:use-lite')).toBe('bundled');
    expect(providerForStore('static:use-lite-distilled-v1')).toBe('static');
    // Another space is not guessed at: the default is then refused by name, as before.
    expect(providerForStore('transformers:Xenova/all-MiniLM-L6-v2')).toBe(NEW_STORE_PROVIDER);
  });

  it('is made for the store the context opens: an upgraded USE lite store keeps USE lite', async () => {
    const asked: (string | null)[] = [];
    const maker = async (stored: string | null) => {
      asked.push(stored);
      return createHashEmbedder(512, 'bundled:use-lite');
    };
    const first = await createAppContext(config, { embedder: maker });
    await first.memories.forTenant('default').save({ key: 'k', content: 'written under USE lite' });
    await first.close();
    const again = await createAppContext(config, { embedder: maker });
    try {
      expect(asked).toEqual([null, 'bundled:use-lite']);
      expect(again.embedder.id).toBe('bundled:use-lite');
      expect(await again.memories.forTenant('default').get('k')).toMatchObject({ content: 'written under USE lite' });
    } finally {
      await again.close();
    }
  });

  it('closes the embedder it made when the store refuses it', async () => {
    let closed = false;
    const refused: Embedder = createHashEmbedder(64, 'test:other-space');
    refused.close = async () => {
      closed = true;
    };
    await expect(createAppContext(config, { embedder: async () => refused })).rejects.toBeInstanceOf(VectorSpaceMismatchError);
    expect(closed).toBe(true);
  });

  it('is built from the configuration when EMBEDDING_PROVIDER is set, and left to the store when not', async () => {
    const set = await configuredEmbedder(loadConfig({ EMBEDDING_PROVIDER: 'static', EMBEDDING_MODEL: FIXTURE }));
    expect(typeof set).toBe('object');
    await (set as Embedder).close();
    const unset = await configuredEmbedder(loadConfig({ EMBEDDING_MODEL: FIXTURE }));
    expect(typeof unset).toBe('function');
    const made = await (unset as (stored: string | null) => Promise<Embedder>)('static:test-fixture-v1');
    try {
      expect(made.id).toBe('static:test-fixture-v1');
    } finally {
      await made.close();
    }
  });

  it('is the bundled static version that embedded the store, the newest for a new store, with or without EMBEDDING_PROVIDER=static', async () => {
    const made: Embedder[] = [];
    const idOf = async (config: ReturnType<typeof loadConfig>, stored: string | null) => {
      const maker = await configuredEmbedder(config);
      expect(typeof maker).toBe('function');
      const embedder = await (maker as (stored: string | null) => Promise<Embedder>)(stored);
      made.push(embedder);
      return embedder.id;
    };
    try {
      for (const config of [loadConfig({}), loadConfig({ EMBEDDING_PROVIDER: 'static' })]) {
        expect(await idOf(config, 'static:use-lite-distilled-v1')).toBe('static:use-lite-distilled-v1');
        expect(await idOf(config, 'static:use-lite-distilled-v2')).toBe('static:use-lite-distilled-v2');
      }
      const explicit = loadConfig({ EMBEDDING_PROVIDER: 'static' });
      expect(await idOf(explicit, null)).toBe('static:use-lite-distilled-v2');
      // A store of another space gets the newest, which the store then refuses by name.
      expect(await idOf(explicit, 'bundled:use-lite')).toBe('static:use-lite-distilled-v2');
      // A folder named by EMBEDDING_MODEL is the model, whatever the store holds.
      expect(await idOf(loadConfig({ EMBEDDING_MODEL: FIXTURE }), 'static:use-lite-distilled-v1')).toBe('static:test-fixture-v1');
    } finally {
      await Promise.all(made.map((e) => e.close()));
    }
  });

  it('opens a store the first static version embedded with that version after the second ships, and finds what it saved', async () => {
    const v1Dir = mkdtempSync(join(tmpdir(), 'memrag-store-static-v1-'));
    try {
      const v1 = loadConfig({
        DATA_DIR: v1Dir,
        LOG_LEVEL: 'silent',
        EMBEDDING_PROVIDER: 'static',
        EMBEDDING_MODEL: BUNDLED_STATIC_MODEL_DIRS.get('static:use-lite-distilled-v1')!,
      });
      const first = await createAppContext(v1, { embedder: await configuredEmbedder(v1) });
      await first.memories.forTenant('default').save({ key: 'tea', content: 'The user drinks green tea every morning' });
      await first.close();
      const unset = loadConfig({ DATA_DIR: v1Dir, LOG_LEVEL: 'silent' });
      const again = await createAppContext(unset, { embedder: await configuredEmbedder(unset) });
      try {
        expect(again.embedder.id).toBe('static:use-lite-distilled-v1');
        const hits = await again.memories.forTenant('default').search('what does the user drink in the morning', { mode: 'vector' });
        expect(hits.map((h) => h.memory.key)).toEqual(['tea']);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(v1Dir, { recursive: true, force: true });
    }
  });
});
