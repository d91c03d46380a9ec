/**
 * A snapshot of the embedded store (PGlite in DATA_DIR) to a file, with the server stopped:
 * `npm run backup -- <file>`. A PostgreSQL server is backed up with pg_dump instead.
 */
import { runBackupCli } from '../db/backup-cli.js';
import { runBackupCommand } from './backup-command.js';

runBackupCommand(runBackupCli);
