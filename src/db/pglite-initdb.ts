import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

// Run by a child process: creates the directory's cluster (initdb, and the vector extension's
// files), applies the schema's migrations and closes it. CommonJS, so it needs no loader; the
// packages' CommonJS builds come as paths resolved here, where the packages are.
const INITDB_SOURCE = `
const [dataDir, pglite, vector, drizzle, migrator, migrationsFolder] = process.argv.slice(1);
(async () => {
  const { PGlite } = require(pglite);
  const { vector: extension } = require(vector);
  const db = await PGlite.create({ dataDir, extensions: { vector: extension } });
  await require(migrator).migrate(require(drizzle).drizzle(db), { migrationsFolder });
  await db.close();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

/**
 * Creates a new PGlite data directory in a child process, migrated to `migrationsFolder`'s schema
 * (a child that dies half-way leaves migrations pending, which the server's own open applies; one
 * whose WebAssembly traps is run once more on the emptied directory, when the directory held nothing).
 * initdb grows PGlite's WebAssembly memory to ~400 MB, which an instance never gives back: done in
 * the server's process, most of it stays resident for the life of the process (a closed instance's
 * memory waits for a garbage collection, and freed memory for the allocator to return it), where
 * an instance that opens an existing directory needs ~200 MB. Measured on the server idle after its
 * first start on a new directory: PGlite held ~535 MB with initdb in the process, ~200 MB with it
 * here. The migrations left ~30 MB more behind in the server's process (idle 352–358 MB against
 * 300–327 with them here, static embedder, compiled server).
 */
export async function initPgliteDirectory(dataDir: string, migrationsFolder: string, options: InitOptions = {}): Promise<void> {
  const runChild = options.runChild ?? runInitdbChild;
  // Only a directory that held nothing is ours to empty for another try.
  const existed = existsSync(dataDir);
  const ours = !existed || readdirSync(dataDir).length === 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return await runChild(dataDir, migrationsFolder);
    } catch (error) {
      if (!(ours && attempt < INITDB_ATTEMPTS && error instanceof InitdbFailed && error.crashedInWasm)) throw error;
      // What the crashed child left (a cluster half made) would pass for a database on the next open.
      rmSync(dataDir, { recursive: true, force: true });
      if (existed) mkdirSync(dataDir, { recursive: true });
    }
  }
}

export interface InitOptions {
  /** Runs one initdb and migration of `dataDir` (a test's stand-in); by default a child process. */
  runChild?: (dataDir: string, migrationsFolder: string) => Promise<void>;
}

/**
 * Tries of a new directory's initdb. PGlite's WebAssembly initdb now and then dies with "memory
 * access out of bounds" (electric-sql/pglite#534; seen here once in a full run of the suite, the
 * machine loaded, and not again in that test's reruns): run again on the emptied directory.
 */
const INITDB_ATTEMPTS = 2;

/** The initdb child's failure, with what it wrote to stderr. */
export class InitdbFailed extends Error {
  constructor(
    dataDir: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`PGlite's initdb of ${dataDir} failed (exit ${exitCode}): ${stderr.trim()}`);
    this.name = 'InitdbFailed';
  }

  /** Whether PGlite's WebAssembly trapped, rather than the schema or the disk failing. */
  get crashedInWasm(): boolean {
    return /RuntimeError/.test(this.stderr);
  }
}

/** One initdb and migration of `dataDir`, in a child process. */
export async function runInitdbChild(dataDir: string, migrationsFolder: string): Promise<void> {
  const require = createRequire(import.meta.url);
  const packages = ['@electric-sql/pglite', '@electric-sql/pglite/vector', 'drizzle-orm/pglite', 'drizzle-orm/pglite/migrator'].map((name) =>
    require.resolve(name),
  );
  const child = spawn(process.execPath, ['-e', INITDB_SOURCE, dataDir, ...packages, migrationsFolder], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new InitdbFailed(dataDir, code, stderr))));
  });
}
