import { resolve } from 'node:path';

/** Where `npm run keys` works: the database itself, a running server's `/v1/keys`, or nowhere (and why). */
export type KeysTarget = { kind: 'database' } | { kind: 'server'; baseUrl: string; apiKey?: string } | { kind: 'refused'; message: string };

export interface KeysTargetInput {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** The server's HOST and PORT from the configuration: where it listens when MEMRAG_URL is unset. */
  host: string;
  port: number;
  /** MEMRAG_URL. */
  serverUrl?: string | undefined;
  /** MEMRAG_API_KEY. */
  apiKey?: string | undefined;
  /** Whether a process has the embedded store open (`pgliteDirectoryInUse`). */
  directoryInUse: (dataDir: string) => boolean;
  /** Whether a memrag server answers at this base URL. */
  serverAnswers: (baseUrl: string) => Promise<boolean>;
}

/**
 * MEMRAG_URL names a server: the commands go through it. A PostgreSQL database is shared safely:
 * the commands write it, and servers notice within API_KEY_CACHE_MS. The embedded store takes one
 * process at a time (PGlite has no lock: a second one corrupts it), so while one holds it the
 * commands go through the server listening at HOST:PORT, or are refused when none answers there.
 */
export async function chooseKeysTarget(input: KeysTargetInput): Promise<KeysTarget> {
  const withKey = (baseUrl: string): KeysTarget => ({ kind: 'server', baseUrl, ...(input.apiKey ? { apiKey: input.apiKey } : {}) });
  if (input.serverUrl) return withKey(input.serverUrl);
  if (input.databaseUrl) return { kind: 'database' };
  if (input.dataDir === 'memory://') {
    return {
      kind: 'refused',
      message: "DATA_DIR is memory://: a key stored there would vanish with this command. Set DATA_DIR to the server's store, or MEMRAG_URL to the server.",
    };
  }
  if (!input.directoryInUse(input.dataDir)) return { kind: 'database' };
  const baseUrl = localUrl(input.host, input.port);
  if (await input.serverAnswers(baseUrl)) return withKey(baseUrl);
  const dir = resolve(input.dataDir);
  return {
    kind: 'refused',
    message:
      `${dir} is held by another process (it has a postmaster.pid): a memrag server, \`npm run worker\`, \`reembed\` or \`keys\`, and opening ` +
      `it beside that process would corrupt it. No memrag server answers at ${baseUrl}. If the server runs elsewhere, set MEMRAG_URL to it ` +
      '(and MEMRAG_API_KEY to an admin key) and run this again: the key is made through the server and works at once. Otherwise stop the ' +
      'process holding the store first. If none is running, the last one did not shut down cleanly: start and stop the server once, then try again.',
  };
}

/** Where a server configured with `host` and `port` is reached from this machine. */
export function localUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** A memrag server's `/healthz` answers `{"status":"ok"}`; anything else, or nothing within `timeoutMs`, is no server. */
export async function memragServerAnswers(baseUrl: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as { status?: unknown };
    return res.ok && body.status === 'ok';
  } catch {
    return false;
  }
}
