/**
 * Loads a backup made by `npm run backup` into an empty DATA_DIR: `npm run restore -- [--force] <file>`.
 * A PostgreSQL server is restored with pg_restore instead.
 */
import { runRestoreCli } from '../db/backup-cli.js';
import { runBackupCommand } from './backup-command.js';

runBackupCommand(runRestoreCli);
