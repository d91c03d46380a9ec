/**
 * Writes the console's bundle and style sheet beside the compiled server (`dist/console/`), so
 * the production image serves them without the browser sources or a TypeScript config. Run by
 * `npm run build` after tsc; `npm start` bundles from source on first request instead.
 *
 *   tsx scripts/build-console.ts [outDir]      (default: dist)
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bundleConsoleScript } from '../src/console/console-bundle.js';
import { CONSOLE_SCRIPT_FILE, CONSOLE_STYLESHEET_FILE, consoleStylesheetSource } from '../src/console/console-assets.js';

const outDir = join(resolve(process.argv[2] ?? 'dist'), 'console');
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, CONSOLE_SCRIPT_FILE), await bundleConsoleScript());
copyFileSync(consoleStylesheetSource, join(outDir, CONSOLE_STYLESHEET_FILE));
console.log(`wrote ${join(outDir, CONSOLE_SCRIPT_FILE)} and ${CONSOLE_STYLESHEET_FILE}`);
