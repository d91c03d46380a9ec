import { sql } from 'drizzle-orm';
import type { Database } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';

export interface CheckResult {
  ok: boolean;
  /** Why not, when not ok. */
  reason?: string;
  durationMs: number;
}

export interface Readiness {
  ready: boolean;
  checks: { database: CheckResult; embedder: CheckResult };
}

/** Long enough for a loaded database to answer, short enough for a load balancer's probe. */
export const READINESS_TIMEOUT_MS = 2_000;

/**
 * Whether this instance can serve: the database answers `SELECT 1` within the timeout, and the
 * embedder is open with workers alive. The embedder is not asked to embed: for a remote provider
 * every probe would be a paid call, and a local model that loaded once stays loaded.
 */
export async function checkReadiness(
  deps: { database: Database; embedder: Embedder & { readonly closed?: boolean } },
  timeoutMs = READINESS_TIMEOUT_MS,
): Promise<Readiness> {
  const [database, embedder] = await Promise.all([checkDatabase(deps.database, timeoutMs), Promise.resolve(checkEmbedder(deps.embedder))]);
  return { ready: database.ok && embedder.ok, checks: { database, embedder } };
}

async function checkDatabase(database: Database, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    // A pool with every connection busy also ends here: the instance is then too loaded to take more.
    await Promise.race([database.db.execute(sql`SELECT 1`), timedOut]);
    return { ok: true, durationMs: elapsed(started) };
  } catch (err) {
    return { ok: false, reason: `database: ${err instanceof Error ? err.message : String(err)}`, durationMs: elapsed(started) };
  } finally {
    clearTimeout(timer);
  }
}

function checkEmbedder(embedder: Embedder & { readonly closed?: boolean }): CheckResult {
  const started = performance.now();
  if (embedder.closed) return { ok: false, reason: 'embedder: closed', durationMs: elapsed(started) };
  // A pool whose workers keep failing to start gives up and rejects every call.
  if (embedder.alive?.() === false) {
    return { ok: false, reason: 'embedder: no embedding worker is alive', durationMs: elapsed(started) };
  }
  return { ok: true, durationMs: elapsed(started) };
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
