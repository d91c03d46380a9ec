import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const BROWSER_DIR = fileURLToPath(new URL('./browser/', import.meta.url));

/**
 * The console's browser code (TypeScript and JSX under ./browser, with preact, openapi-fetch and
 * eventsource-parser from node_modules) as one ES module. Bundled by esbuild in the server's
 * process rather than by a build step: `npm start` serves it with no extra command, and the
 * bundle can never be older than the source next to it.
 */
export async function bundleConsoleScript(): Promise<string> {
  const result = await build({
    entryPoints: [`${BROWSER_DIR}main.tsx`],
    tsconfig: `${BROWSER_DIR}tsconfig.json`,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error('esbuild produced no console bundle');
  return output.text;
}
