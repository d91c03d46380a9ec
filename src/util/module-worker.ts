import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The file: URL of `baseName` in the folder of the module at `moduleUrl` (pass `import.meta.url`),
 * with that module's extension: .ts under tsx/vitest, .js once compiled.
 */
export function siblingUrl(moduleUrl: string, baseName: string): string {
  return new URL(`./${baseName}${path.extname(fileURLToPath(moduleUrl))}`, moduleUrl).href;
}

/** How a worker thread loads the ES module at `entryUrl`: what it imports, and its Node options. */
export interface ModuleWorkerEntry {
  filename: string;
  execArgv?: string[];
}

/**
 * Under tsx or vitest the worker entry is TypeScript, which a bare worker thread cannot load:
 * the worker first registers tsx's loader (`--import`, before anything else runs in it), then
 * imports the entry. Compiled JS needs none of it, and keeps the process's own Node options.
 */
export function moduleWorkerEntry(entryUrl: string): ModuleWorkerEntry {
  if (!/\.[mc]?ts$/.test(entryUrl)) return { filename: entryUrl };
  const register = `const api = await import(${JSON.stringify(tsxEsmApiUrl())}); (api.register ?? api.default.register)();`;
  return { filename: entryUrl, execArgv: [...process.execArgv, '--import', `data:text/javascript,${encodeURIComponent(register)}`] };
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
