import { BUNDLED_USE_IDENTITY } from './bundled-use-embedder.js';
import type { Embedder } from './embedder.js';

/** The local embedders a store gets without EMBEDDING_PROVIDER. */
export type DefaultProvider = 'bundled' | 'static';

/**
 * What a new store is embedded with when EMBEDDING_PROVIDER is unset: USE lite. The static model
 * distilled from it is chosen by name, and a store re-embedded with it keeps it
 * (docs/benchmarks/static-embedder.md has the figures that decide between them).
 */
export const NEW_STORE_PROVIDER: DefaultProvider = 'bundled';

/**
 * The provider an unset EMBEDDING_PROVIDER means for a store whose vectors came from
 * `storedEmbedderId` (null: a new store): a store embedded by either local model keeps it, so a
 * store moved to the other one by `npm run reembed` starts with it without a setting, and one made
 * before the static model existed keeps USE lite whatever the new stores' default. Any other space
 * goes to that default, and is then refused by name, as it always was.
 */
export function providerForStore(storedEmbedderId: string | null): DefaultProvider {
  if (storedEmbedderId === BUNDLED_USE_IDENTITY.id) return 'bundled';
  if (storedEmbedderId?.startsWith(STATIC_ID_PREFIX)) return 'static';
  return NEW_STORE_PROVIDER;
}

/** Every static model's id starts so (static-model-format.ts). */
const STATIC_ID_PREFIX = 'static:';

/** Makes the embedder for a store whose vectors came from `storedEmbedderId` (null: none recorded yet). */
export type EmbedderForStore = (storedEmbedderId: string | null) => Promise<Embedder>;
