import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { bundleConsoleScript } from './console-bundle.js';

const STYLESHEET = fileURLToPath(new URL('./browser/console.css', import.meta.url));

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

/** The console's script and style sheet, made on first request: most servers never serve the console, and bundling takes a few hundred ms. */
export function createConsoleAssets(): ConsoleAssets {
  return { script: loadOnce(bundleConsoleScript), stylesheet: loadOnce(() => readFile(STYLESHEET, 'utf8')) };
}
