import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

/** What bench:peers calls of @mastra/pg's PgVector (its 1.27 API), typed here so the project typechecks without it installed. */
export interface PgVectorStore {
  createIndex(options: {
    indexName: string;
    dimension: number;
    metric: 'cosine';
    indexConfig: { type: 'hnsw'; hnsw: { m: number; efConstruction: number } };
  }): Promise<void>;
  upsert(options: { indexName: string; ids: string[]; vectors: number[][]; metadata: Record<string, unknown>[] }): Promise<string[]>;
  query(options: { indexName: string; queryVector: number[]; topK: number; filter?: Record<string, unknown> }): Promise<{ id: string; score: number }[]>;
  disconnect(): Promise<void>;
}
export type PgVectorClass = new (options: { id: string; connectionString: string }) => PgVectorStore;

const peerDeps = join(dirname(fileURLToPath(import.meta.url)), '..', 'peer-deps');

/**
 * @mastra/pg's PgVector from scripts/bench/peer-deps (`npm run bench:peers` installs it there
 * first, from that folder's lockfile): it declares Node >= 22, so as one of the project's own
 * devDependencies every `npm install` warned about it, for a benchmark few run.
 */
export async function loadPgVector(): Promise<PgVectorClass> {
  const packageDir = join(peerDeps, 'node_modules', '@mastra', 'pg');
  let manifest: { exports: { '.': { import: { default: string } } } };
  try {
    manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as typeof manifest;
  } catch {
    throw new Error(
      `@mastra/pg is not installed in ${peerDeps}: run \`npm run bench:peers\` (its prebench step installs it) or \`npm ci --prefix ${peerDeps}\``,
    );
  }
  const module = (await import(pathToFileURL(join(packageDir, manifest.exports['.'].import.default)).href)) as { PgVector: PgVectorClass };
  return module.PgVector;
}
