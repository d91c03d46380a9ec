/**
 * API keys (see src/auth): `npm run keys -- create --tenant acme [--name ci] [--scopes read,write]`,
 * `npm run keys -- list`, `npm run keys -- revoke <id|prefix>`. Works on DATABASE_URL or the
 * embedded store in DATA_DIR, or through a running server's `/v1/keys` (MEMRAG_URL, or the server
 * holding DATA_DIR) with MEMRAG_API_KEY: see src/auth/keys-target.ts.
 */
import { dbKeysBackend } from '../auth/keys-backend.js';
import { KEYS_USAGE, runKeysCli } from '../auth/keys-cli.js';
import { keysHttpBackend } from '../auth/keys-http-backend.js';
import { chooseKeysTarget, memragServerAnswers } from '../auth/keys-target.js';
import { ConfigError, loadConfig } from '../config/config.js';
import { openDatabase } from '../db/database.js';
import { pgliteDirectoryInUse } from '../db/pglite-backup.js';

async function main(): Promise<number> {
  const config = loadConfig();
  const io = { out: (line: string) => console.log(line), err: (line: string) => console.error(line) };
  const argv = process.argv.slice(2);
  // Help needs no store, and must not be refused for want of one.
  if (argv.includes('--help') || argv.includes('-h')) {
    io.err(KEYS_USAGE);
    return 0;
  }
  const target = await chooseKeysTarget({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    host: config.HOST,
    port: config.PORT,
    serverUrl: process.env.MEMRAG_URL,
    apiKey: process.env.MEMRAG_API_KEY,
    directoryInUse: pgliteDirectoryInUse,
    serverAnswers: (url) => memragServerAnswers(url),
  });
  if (target.kind === 'refused') {
    io.err(target.message);
    return 1;
  }
  if (target.kind === 'server') {
    io.err(`Through the memrag server at ${target.baseUrl}.`);
    return runKeysCli(argv, keysHttpBackend(target), io);
  }
  const database = await openDatabase(config.DATABASE_URL ? { url: config.DATABASE_URL } : { dataDir: config.DATA_DIR });
  try {
    return await runKeysCli(argv, dbKeysBackend(database.db), io);
  } finally {
    await database.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
