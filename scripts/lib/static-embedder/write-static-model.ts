import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sha256 } from '../../../src/embeddings/static-model-files.js';
import { STATIC_MODEL_FILES, type StaticManifest, type TokenTable } from '../../../src/embeddings/static-model-format.js';
import { formatTokenTable } from '../../../src/embeddings/static-token-table.js';

export type ManifestWithoutFiles = Omit<StaticManifest, 'files'>;

/** The table and weights as written, and the manifest that names their checksums. */
export function modelFiles(manifest: ManifestWithoutFiles, table: TokenTable, weights: Buffer): { manifest: StaticManifest; tableText: string } {
  const tableText = formatTokenTable(table);
  return {
    tableText,
    manifest: {
      ...manifest,
      files: {
        table: { path: STATIC_MODEL_FILES.table, sha256: sha256(tableText), bytes: Buffer.byteLength(tableText) },
        weights: { path: STATIC_MODEL_FILES.weights, sha256: sha256(weights), bytes: weights.length },
      },
    },
  };
}

export async function writeStaticModel(directory: string, files: { manifest: StaticManifest; tableText: string }, weights: Buffer): Promise<void> {
  await mkdir(directory, { recursive: true });
  await writeFile(path.join(directory, STATIC_MODEL_FILES.table), files.tableText);
  await writeFile(path.join(directory, STATIC_MODEL_FILES.weights), weights);
  // Last: a manifest names files that are all there.
  await writeFile(path.join(directory, STATIC_MODEL_FILES.manifest), `${JSON.stringify(files.manifest, null, 2)}\n`);
}
