import { and, asc, desc, sql } from 'drizzle-orm';
import { memories } from '../db/schema/index.js';
import { validAtSql } from '../retrieval/filter-sql.js';
import { afterCursor, createdAtText, keysetPage } from '../retrieval/keyset-page.js';
import { createMemoryAsOfReads } from './memory-as-of-reads.js';
import { memoryFilter } from './memory-corpus.js';
import { readMemoryHistory } from './memory-history.js';
import { memoryColumns, notExpired, toMemory } from './memory-rows.js';
import { byKey, storedScope } from './memory-scope.js';
import type { MemoryStoreContext } from './memory-store-context.js';
import type { ListMemoriesOptions, Memory, MemoryEvent, MemoryFilter, MemoryPage, MemoryScope, MemoryStore, ReadMoment, TagCount } from './memory-types.js';

/** Reads by key, page and tag, as the memories are now or (`asOf`) were then; and a key's history. */
export function createMemoryReads(ctx: MemoryStoreContext): Pick<MemoryStore, 'get' | 'list' | 'tagCounts' | 'history'> {
  const { db, tenantId } = ctx;
  const asOfReads = createMemoryAsOfReads(ctx);

  async function history(key: string, scope?: MemoryScope): Promise<MemoryEvent[]> {
    return readMemoryHistory(db, tenantId, { ...storedScope(scope), key });
  }

  async function get(key: string, scopeInput?: MemoryScope, moment: ReadMoment = {}): Promise<Memory | null> {
    const scope = storedScope(scopeInput);
    const validAt = moment.validAt === null ? undefined : (moment.validAt?.toISOString() ?? 'now');
    if (moment.asOf) return asOfReads.get(key, scope, moment.asOf, validAt);
    const [row] = await db
      .select(memoryColumns)
      .from(memories)
      .where(and(byKey(tenantId, key, scope), notExpired, validAt === undefined ? undefined : validAtSql(validAt, memories.validFrom, memories.validUntil)));
    return row ? toMemory(row) : null;
  }

  async function list(opts: ListMemoriesOptions = {}): Promise<MemoryPage> {
    if (opts.asOf) return asOfReads.list({ ...opts, asOf: opts.asOf });
    const limit = opts.limit ?? 50;
    const rows = await db
      .select({ ...memoryColumns, id: memories.id, createdAtText: createdAtText(memories) })
      .from(memories)
      .where(and(ctx.where(memoryFilter(tenantId, opts)), afterCursor(opts.cursor, memories)))
      .orderBy(desc(memories.createdAt), desc(memories.id))
      .limit(limit + 1);
    return keysetPage(rows, limit, ({ id: _i, createdAtText: _c, ...row }) => toMemory(row));
  }

  async function tagCounts(filterInput: MemoryFilter = {}): Promise<TagCount[]> {
    const filter = memoryFilter(tenantId, filterInput);
    const tag = sql<string>`t.tag`;
    const rows = await db
      .select({ tag, count: sql<number>`count(*)::int` })
      .from(sql`${memories}, unnest(${memories.tags}) AS t(tag)`)
      .where(ctx.where(filter))
      .groupBy(tag)
      .orderBy(desc(sql`count(*)`), asc(tag));
    return rows.map((r) => ({ tag: r.tag, count: Number(r.count) }));
  }

  return { history, get, list, tagCounts };
}
