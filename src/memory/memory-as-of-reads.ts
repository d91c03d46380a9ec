import { keysetPage } from '../retrieval/keyset-page.js';
import { readVersions } from './memory-as-of.js';
import { memoryFilter } from './memory-corpus.js';
import type { StoredScope } from './memory-scope.js';
import type { MemoryStoreContext } from './memory-store-context.js';
import type { ListMemoriesOptions, Memory, MemoryPage } from './memory-types.js';

/** Reads of the memories as they were at a moment of record time (`asOf`), from their history. */
export interface MemoryAsOfReads {
  /** `validAt`: an ISO moment or `now`; undefined: whenever the fact holds. */
  get(key: string, scope: StoredScope, asOf: Date, validAt: string | undefined): Promise<Memory | null>;
  list(opts: ListMemoriesOptions & { asOf: Date }): Promise<MemoryPage>;
}

export function createMemoryAsOfReads(ctx: MemoryStoreContext): MemoryAsOfReads {
  const { db, tenantId } = ctx;

  async function get(key: string, scope: StoredScope, asOf: Date, validAt: string | undefined): Promise<Memory | null> {
    // Invalidated memories are read too, as without asOf: they keep their key.
    const { validAt: _default, ...anyValidTime } = memoryFilter(tenantId, {
      agentId: scope.agentId,
      userId: scope.userId,
      includeInvalid: true,
      includeQuarantined: true,
    });
    const filter = validAt === undefined ? anyValidTime : { ...anyValidTime, validAt };
    const [version] = await readVersions(db, { filter, asOf, key });
    return version?.memory ?? null;
  }

  async function list(opts: ListMemoriesOptions & { asOf: Date }): Promise<MemoryPage> {
    const limit = opts.limit ?? 50;
    const versions = await readVersions(db, { filter: memoryFilter(tenantId, opts), asOf: opts.asOf, cursor: opts.cursor, limit: limit + 1 });
    return keysetPage(
      versions.map((v) => ({ ...v, id: v.memoryId })),
      limit,
      (v) => v.memory,
    );
  }

  return { get, list };
}
