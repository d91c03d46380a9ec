import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundledUseEmbedderOptions } from './bundled-use-embedder.js';
import type { Embedder } from './embedder.js';
import type { TransformersEmbedderOptions } from './transformers-embedder.js';

/**
 * How to build an embedder somewhere else (a worker thread): which module, which exported async
 * factory, and the structured-cloneable options to call it with. Naming a module instead of
 * importing it keeps the heavy model libraries out of the thread that only dispatches work.
 */
export interface EmbedderModuleSpec {
  /** file: URL of an ES module. */
  moduleUrl: string;
  /** Name of the exported `(options) => Promise<Embedder>` factory. */
  exportName: string;
  options?: unknown;
}

// Sibling modules share this file's extension: .ts under tsx/vitest, .js once compiled.
const ownExtension = path.extname(fileURLToPath(import.meta.url));

export function siblingModuleUrl(baseName: string): string {
  return new URL(`./${baseName}${ownExtension}`, import.meta.url).href;
}

export function bundledUseSpec(options: BundledUseEmbedderOptions = {}): EmbedderModuleSpec {
  return { moduleUrl: siblingModuleUrl('bundled-use-embedder'), exportName: 'createBundledUseEmbedder', options };
}

export function transformersSpec(options: TransformersEmbedderOptions): EmbedderModuleSpec {
  return { moduleUrl: siblingModuleUrl('transformers-embedder'), exportName: 'createTransformersEmbedder', options };
}

export async function loadEmbedderFromSpec(spec: EmbedderModuleSpec): Promise<Embedder> {
  const module = (await import(spec.moduleUrl)) as Record<string, unknown>;
  const factory = module[spec.exportName];
  if (typeof factory !== 'function') {
    throw new TypeError(`${spec.moduleUrl} has no exported function "${spec.exportName}"`);
  }
  return (await (factory as (options: unknown) => Promise<Embedder>)(spec.options)) as Embedder;
}
