import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

// Run by a child process: creates the directory's cluster (initdb, and the vector extension's
// files) and closes it. CommonJS, so it needs no loader; PGlite's CommonJS builds come as paths
// resolved here, where the package is.
const INITDB_SOURCE = `
const [dataDir, pglite, vector] = process.argv.slice(1);
(async () => {
  const { PGlite } = require(pglite);
  const { vector: extension } = require(vector);
  const db = await PGlite.create({ dataDir, extensions: { vector: extension } });
  await db.close();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

/**
 * Creates a new PGlite data directory in a child process. initdb grows PGlite's WebAssembly memory
 * to ~400 MB, which an instance never gives back: done in the server's process, most of it stays
 * resident for the life of the process (a closed instance's memory waits for a garbage collection,
 * and freed memory for the allocator to return it), where an instance that opens an existing
 * directory needs ~200 MB. Measured on the server idle after its first start on a new directory:
 * PGlite held ~535 MB with initdb in the process, ~200 MB with it here.
 */
export async function initPgliteDirectory(dataDir: string): Promise<void> {
  const require = createRequire(import.meta.url);
  const child = spawn(
    process.execPath,
    ['-e', INITDB_SOURCE, dataDir, require.resolve('@electric-sql/pglite'), require.resolve('@electric-sql/pglite/vector')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`PGlite's initdb of ${dataDir} failed (exit ${code}): ${stderr.trim()}`))));
  });
}
