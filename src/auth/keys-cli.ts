import { parseArgs } from 'node:util';
import { tenantIdSchema } from '../tenancy/tenant-id.js';
import { DEFAULT_NEW_KEY_SCOPES, parseScopeList } from './api-key-scopes.js';
import type { ApiKeyRecord } from './api-key-store.js';
import type { KeysBackend } from './keys-backend.js';
import { KeysServerError } from './keys-http-backend.js';

export const KEYS_USAGE = `Usage: npm run keys -- <command>
  create --tenant <tenant> [--name <name>] [--scopes <scopes>]
                                             Create a key; prints it once, on stdout. Scopes: read, write,
                                             admin, comma-separated (default ${DEFAULT_NEW_KEY_SCOPES.join(',')})
  list                                       List every key (never the key itself)
  revoke <id|prefix>                         Revoke a key, named by id or by (a start of) its prefix
While a server holds the embedded store (DATA_DIR), or with MEMRAG_URL set, the commands go through
the server's /v1/keys (MEMRAG_URL, default http://127.0.0.1:PORT) with MEMRAG_API_KEY, an admin key.`;

export interface KeysCliIo {
  /** What scripts capture: the new key, the listing. */
  out(line: string): void;
  /** What people read: confirmations, warnings, errors. */
  err(line: string): void;
}

const NAME_MAX_CHARS = 200;

/** Runs one `npm run keys` command against `keys`; returns the exit code (1: refused or failed, 2: usage). */
export async function runKeysCli(argv: readonly string[], keys: KeysBackend, io: KeysCliIo): Promise<number> {
  try {
    return await runCommand(argv, keys, io);
  } catch (err) {
    if (!(err instanceof KeysServerError)) throw err;
    io.err(err.message);
    return 1;
  }
}

async function runCommand(argv: readonly string[], keys: KeysBackend, io: KeysCliIo): Promise<number> {
  // biome-ignore lint/suspicious/noImplicitAnyLet: typed by TypeScript's flow analysis from parseArgs below.
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { tenant: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
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
      const scopes = values.scopes === undefined ? { scopes: [...DEFAULT_NEW_KEY_SCOPES] } : parseScopeList(values.scopes);
      if ('problem' in scopes) return usage(io, scopes.problem);
      const created = await keys.create({ tenantId: tenant.data, name, scopes: scopes.scopes });
      io.out(created.key);
      io.err(
        `Created key ${created.prefix}… (id ${created.id}) for tenant ${created.tenantId}${name ? ` (${name})` : ''}, scopes ${created.scopes.join(',')}.`,
      );
      io.err('The key above is shown this once: only its hash is stored.');
      io.err(keys.takesEffect);
      return 0;
    }
    case 'list': {
      if (rest.length > 0 || values.tenant !== undefined || values.name !== undefined || values.scopes !== undefined)
        return usage(io, 'list takes no arguments');
      const listed = await keys.list();
      if (listed.length === 0) {
        io.err('No API keys are stored.');
        return 0;
      }
      for (const line of table(listed)) io.out(line);
      return 0;
    }
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: every case of the switch inside returns.
    case 'revoke': {
      const [target, ...extra] = rest;
      if (target === undefined || target.trim() === '' || extra.length > 0) return usage(io, 'revoke needs one key id or prefix');
      const result = await keys.revoke(target.trim());
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
          io.err(keys.takesEffect);
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
    ['ID', 'TENANT', 'PREFIX', 'NAME', 'SCOPES', 'CREATED', 'STATUS'],
    ...keys.map((k) => [
      k.id,
      k.tenantId,
      k.prefix,
      k.name || '-',
      k.scopes.join(','),
      k.createdAt.toISOString(),
      k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
}
