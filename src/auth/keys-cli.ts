import { parseArgs } from 'node:util';
import type { Db } from '../db/database.js';
import { tenantIdSchema } from '../tenancy/tenant-id.js';
import { type ApiKeyRecord, createApiKey, listApiKeys, revokeApiKey } from './api-key-store.js';

export const KEYS_USAGE = `Usage: npm run keys -- <command>
  create --tenant <tenant> [--name <name>]   Create a key; prints it once, on stdout
  list                                       List every key (never the key itself)
  revoke <id|prefix>                         Revoke a key, named by id or by (a start of) its prefix`;

export interface KeysCliIo {
  /** What scripts capture: the new key, the listing. */
  out(line: string): void;
  /** What people read: confirmations, warnings, errors. */
  err(line: string): void;
}

const NAME_MAX_CHARS = 200;

/** Runs one `npm run keys` command against `db`; returns the exit code (2: usage). */
export async function runKeysCli(argv: readonly string[], db: Db, io: KeysCliIo): Promise<number> {
  // biome-ignore lint/suspicious/noImplicitAnyLet: typed by TypeScript's flow analysis from parseArgs below.
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { tenant: { type: 'string' }, name: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    return usage(io, (err as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) return usage(io, command === undefined && !values.help ? 'a command is required' : undefined);

  switch (command) {
    case 'create': {
      if (rest.length > 0) return usage(io, `create takes no positional arguments (got ${rest.join(' ')})`);
      const tenant = tenantIdSchema.safeParse(values.tenant ?? '');
      if (values.tenant === undefined) return usage(io, 'create needs --tenant <tenant>');
      if (!tenant.success) return usage(io, `--tenant ${tenant.error.issues[0]?.message ?? 'is invalid'}`);
      const name = values.name?.trim() ?? '';
      if (name.length > NAME_MAX_CHARS || /[\u0000-\u001F\u007F]/.test(name)) return usage(io, `--name must be at most ${NAME_MAX_CHARS} printable characters`);
      const created = await createApiKey(db, { tenantId: tenant.data, name });
      io.out(created.key);
      io.err(`Created key ${created.prefix}… (id ${created.id}) for tenant ${created.tenantId}${name ? ` (${name})` : ''}.`);
      io.err('The key above is shown this once: only its hash is stored.');
      return 0;
    }
    case 'list': {
      if (rest.length > 0 || values.tenant !== undefined || values.name !== undefined) return usage(io, 'list takes no arguments');
      const keys = await listApiKeys(db);
      if (keys.length === 0) {
        io.err('No API keys are stored.');
        return 0;
      }
      for (const line of table(keys)) io.out(line);
      return 0;
    }
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: every case of the switch inside returns.
    case 'revoke': {
      const [target, ...extra] = rest;
      if (target === undefined || target.trim() === '' || extra.length > 0) return usage(io, 'revoke needs one key id or prefix');
      const result = await revokeApiKey(db, target.trim());
      switch (result.status) {
        case 'not_found':
          io.err(`No API key has the id or prefix ${JSON.stringify(target)}.`);
          return 1;
        case 'ambiguous':
          io.err(`${result.matches.length} keys start with ${JSON.stringify(target)}; name one by id:`);
          for (const line of table(result.matches)) io.err(line);
          return 1;
        case 'already_revoked':
          io.err(`Key ${result.key.prefix}… (id ${result.key.id}) was already revoked on ${result.key.revokedAt!.toISOString()}.`);
          return 0;
        case 'revoked':
          io.err(`Revoked key ${result.key.prefix}… (id ${result.key.id}, tenant ${result.key.tenantId}).`);
          io.err('Running servers refuse it within API_KEY_CACHE_MS (5 s by default).');
          return 0;
      }
    }
    default:
      return usage(io, `unknown command ${JSON.stringify(command)}`);
  }
}

function usage(io: KeysCliIo, problem: string | undefined): number {
  if (problem) io.err(`error: ${problem}`);
  io.err(KEYS_USAGE);
  return problem ? 2 : 0;
}

function table(keys: readonly ApiKeyRecord[]): string[] {
  const rows = [
    ['ID', 'TENANT', 'PREFIX', 'NAME', 'CREATED', 'STATUS'],
    ...keys.map((k) => [k.id, k.tenantId, k.prefix, k.name || '-', k.createdAt.toISOString(), k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
}
