import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

// Under tsx or vitest the worker entry is TypeScript, which a bare worker thread cannot load:
// the worker first registers tsx's loader, then imports the entry. Compiled JS needs none of it.
const TS_BOOTSTRAP = `
import { workerData } from 'node:worker_threads';
const api = await import(workerData.tsxApiUrl);
(api.register ?? api.default.register)();
await import(workerData.entryUrl);
`;

/**
 * The file: URL of `baseName` in the folder of the module at `moduleUrl` (pass `import.meta.url`),
 * with that module's extension: .ts under tsx/vitest, .js once compiled.
 */
export function siblingUrl(moduleUrl: string, baseName: string): string {
  return new URL(`./${baseName}${path.extname(fileURLToPath(moduleUrl))}`, moduleUrl).href;
}

/** Starts a worker thread on the ES module at `entryUrl`, TypeScript or compiled. */
export function startModuleWorker(entryUrl: string, workerData: object): Worker {
  if (!/\.[mc]?ts$/.test(entryUrl)) return new Worker(new URL(entryUrl), { workerData });
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(TS_BOOTSTRAP)}`), {
    workerData: { ...workerData, entryUrl, tsxApiUrl: tsxEsmApiUrl() },
  });
}

/**
 * The ESM build of tsx's register API. require.resolve would pick the CommonJS build, whose
 * loader registration points at a path that does not exist inside a worker.
 */
function tsxEsmApiUrl(): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve('tsx/package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    exports: Record<string, { import: string | { default: string } }>;
  };
  const target = manifest.exports['./esm/api']?.import;
  if (!target) throw new Error('tsx has no ./esm/api export; cannot run TypeScript worker threads');
  return pathToFileURL(path.join(path.dirname(manifestPath), typeof target === 'string' ? target : target.default)).href;
}
