import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** Prebuilt by `npm run build` (scripts/build-console.ts) beside the compiled console-assets.js. */
export const CONSOLE_SCRIPT_FILE = 'console.js';
export const CONSOLE_STYLESHEET_FILE = 'console.css';
export const consoleStylesheetSource = fileURLToPath(new URL('./browser/console.css', import.meta.url));

export interface ConsoleAssets {
  /** The browser code, bundled (console-bundle.ts). */
  script(): Promise<string>;
  stylesheet(): Promise<string>;
}

/** `load` run on first call and its result kept; a failure is not kept, so the next call tries again. */
function loadOnce(load: () => Promise<string>): () => Promise<string> {
  let loading: Promise<string> | undefined;
  return () => {
    if (!loading) {
      loading = load();
      loading.catch(() => (loading = undefined));
    }
    return loading;
  };
}

/** A file written beside this module by the build, if there is one (only in dist/). */
async function prebuilt(name: string): Promise<string | undefined> {
  try {
    return await readFile(new URL(`./${name}`, import.meta.url), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The console's script and style sheet, made on first request: most servers never serve the
 * console, and bundling takes a few hundred ms. The compiled server serves what the build wrote
 * beside it; run from source, the script is bundled from ./browser (esbuild loaded only then).
 */
export function createConsoleAssets(): ConsoleAssets {
  return {
    script: loadOnce(async () => (await prebuilt(CONSOLE_SCRIPT_FILE)) ?? (await import('./console-bundle.js')).bundleConsoleScript()),
    stylesheet: loadOnce(async () => (await prebuilt(CONSOLE_STYLESHEET_FILE)) ?? readFile(consoleStylesheetSource, 'utf8')),
  };
}
