/**
 * Loads a backup made by `npm run backup` into an empty DATA_DIR: `npm run restore -- [--force] <file>`.
 * A PostgreSQL server is restored with pg_restore instead.
 */
import { runRestoreCli } from '../db/backup-cli.js';
import { ConfigError, loadConfig } from '../config/config.js';

async function main(): Promise<number> {
  const config = loadConfig();
  return runRestoreCli(
    process.argv.slice(2),
    { databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR },
    {
      out: (line) => console.log(line),
      err: (line) => console.error(line),
    },
  );
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
