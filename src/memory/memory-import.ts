import { randomUUID } from 'node:crypto';
import { type SQL, inArray, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/database.js';
import { memories, memoryHistory } from '../db/schema/index.js';
import type { Embedder } from '../embeddings/embedder.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { createCorpusIndex } from '../retrieval/corpus-index.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { MEMORY_CORPUS, storedUserId } from './memory-corpus.js';
import type { ExportedMemory } from './memory-export.js';

export interface MemoryImportResult {
  imported: number;
  /** Memories whose scope and key the tenant holds already: left as they are. */
  skipped: number;
  historyEvents: number;
}

export interface MemoryImporterOptions {
  db: Db;
  embedder: Embedder;
  tenantId?: string;
  /** The analyzer of the tenant's memory store: postings must be the ones it would write. */
  analyzer?: Analyzer;
}

/**
 * Writes exported memories as they were: their keys, times, validity and history events, with
 * vectors of this server's embedder and postings under the tenant's memory corpus lock, so search
 * statistics stay exact. A memory whose scope and key are taken is skipped, which makes importing
 * the same file twice change nothing; its id is kept unless another row (of any tenant) holds it.
 */
export function createMemoryImporter(options: MemoryImporterOptions) {
  const { db, embedder } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const index = createCorpusIndex(MEMORY_CORPUS, options.analyzer ?? defaultAnalyzer);
  const scopeKey = (m: Pick<ExportedMemory, 'agentId' | 'userId' | 'key'>) => JSON.stringify([m.agentId, storedUserId(m.userId), m.key]);
  const tuples = (records: readonly ExportedMemory[]) =>
    sql.join(
      records.map((m) => sql`(${m.agentId}, ${storedUserId(m.userId)}, ${m.key})`),
      sql`, `,
    );
  const inKeys = (records: readonly ExportedMemory[], table: typeof memories | typeof memoryHistory): SQL =>
    sql`${table.tenantId} = ${tenantId} AND (${table.agentId}, ${table.userId}, ${table.key}) IN (${tuples(records)})`;

  async function existingKeys(q: Db | Tx, records: readonly ExportedMemory[]): Promise<Set<string>> {
    if (records.length === 0) return new Set();
    const rows = await q.select({ agentId: memories.agentId, userId: memories.userId, key: memories.key }).from(memories).where(inKeys(records, memories));
    return new Set(rows.map((r) => JSON.stringify([r.agentId, r.userId, r.key])));
  }

  /**
   * Vectors of the records the caller said come next, by text, embedded while the batch before
   * them is written: the embedder works in its own threads, so the two overlap. An entry is taken
   * by the batch that uses it; one whose embedding failed is embedded again there.
   */
  const ahead = new Map<string, Promise<number[] | undefined>>();
  /** The look-ahead's key lookup, awaited before a batch reads `ahead`, so no text is embedded twice. */
  let lookingAhead: Promise<void> = Promise.resolve();

  function embedAhead(records: readonly ExportedMemory[]): void {
    const previous = lookingAhead;
    lookingAhead = (async () => {
      await previous;
      // As importMemories does: keys the tenant holds cost no embedder time, so a second import stays cheap.
      const present = await existingKeys(db, records);
      const texts = [...new Set(records.filter((m) => !present.has(scopeKey(m))).map((m) => m.content))].filter((t) => !ahead.has(t));
      if (texts.length === 0) return;
      const vectors = embedder.embed(texts);
      texts.forEach((text, i) =>
        ahead.set(
          text,
          vectors.then(
            (v) => v[i],
            () => undefined,
          ),
        ),
      );
    })().catch(() => {});
  }

  async function vectorsOf(texts: readonly string[]): Promise<number[][]> {
    await lookingAhead;
    const found = await Promise.all(texts.map((t) => ahead.get(t)));
    for (const t of texts) ahead.delete(t);
    const missing = texts.filter((_, i) => found[i] === undefined);
    const embedded = missing.length > 0 ? await embedder.embed(missing) : [];
    if (embedded.length !== missing.length) throw new Error(`embedder ${embedder.id} returned ${embedded.length} vectors for ${missing.length} texts`);
    let next = 0;
    return found.map((vector) => vector ?? embedded[next++]!);
  }

  async function importMemories(records: readonly ExportedMemory[]): Promise<MemoryImportResult> {
    const seen = new Set<string>();
    const unique = records.filter((m) => !seen.has(scopeKey(m)) && seen.add(scopeKey(m)));
    // Looked up before embedding, so a second import of a file costs no embedder time.
    const present = await existingKeys(db, unique);
    const fresh = unique.filter((m) => !present.has(scopeKey(m)));
    const vectors = fresh.length > 0 ? await vectorsOf(fresh.map((m) => m.content)) : [];
    const written = fresh.length === 0 ? { imported: 0, historyEvents: 0 } : await index.write(db, tenantId, true, (tx) => write(tx, fresh, vectors));
    return { ...written, skipped: records.length - written.imported };
  }

  async function write(tx: Tx, candidates: readonly ExportedMemory[], vectors: readonly number[][]): Promise<{ imported: number; historyEvents: number }> {
    // Read again under the lock: a writer may have taken a key since.
    const taken = await existingKeys(tx, candidates);
    const todo = candidates.flatMap((m, i) => (taken.has(scopeKey(m)) ? [] : [{ m, vector: vectors[i]! }]));
    if (todo.length === 0) return { imported: 0, historyEvents: 0 };
    const usedIds = new Set(
      (
        await tx
          .select({ id: memories.id })
          .from(memories)
          .where(
            inArray(
              memories.id,
              todo.map(({ m }) => m.id),
            ),
          )
      ).map((r) => r.id),
    );
    const recorded = await tx
      .select({ agentId: memoryHistory.agentId, userId: memoryHistory.userId, key: memoryHistory.key, event: memoryHistory.event, at: memoryHistory.at })
      .from(memoryHistory)
      .where(
        inKeys(
          todo.map(({ m }) => m),
          memoryHistory,
        ),
      );
    const recordedEvents = new Set(recorded.map((e) => JSON.stringify([e.agentId, e.userId, e.key, e.event, e.at.toISOString()])));
    const date = (s: string | null) => (s === null ? null : new Date(s));
    const rows = todo.map(({ m, vector }) => {
      const id = usedIds.has(m.id) ? randomUUID() : m.id;
      return { m, id, vector, terms: index.termsOf(m.content) };
    });
    for (let i = 0; i < rows.length; i += 100) {
      const slice = rows.slice(i, i + 100);
      await tx.insert(memories).values(
        slice.map(({ m, id, vector, terms }) => ({
          id,
          tenantId,
          agentId: m.agentId,
          userId: storedUserId(m.userId),
          key: m.key,
          content: m.content,
          tags: m.tags,
          metadata: m.metadata,
          sources: m.sources,
          embedding: vector,
          bm25Length: terms.length,
          validFrom: date(m.validFrom),
          validUntil: date(m.validUntil),
          validTo: date(m.validTo),
          expiresAt: date(m.expiresAt),
          status: m.status,
          quarantineReasons: m.quarantineReasons,
          createdAt: new Date(m.createdAt),
          updatedAt: new Date(m.updatedAt),
        })),
      );
      await index.add(
        tx,
        tenantId,
        slice.map(({ id, terms }) => ({ id, ...terms })),
      );
    }
    // Events in their order (the history's id is its order); one already on record is not written twice.
    const events = rows.flatMap(({ m, id }) =>
      m.history
        .filter((e) => !recordedEvents.has(JSON.stringify([m.agentId, storedUserId(m.userId), m.key, e.event, new Date(e.at).toISOString()])))
        .map((e) => ({
          tenantId,
          memoryId: e.memoryId === m.id ? id : e.memoryId,
          agentId: m.agentId,
          userId: storedUserId(m.userId),
          key: m.key,
          event: e.event,
          content: e.content,
          previousContent: e.previousContent,
          tags: e.tags,
          previousTags: e.previousTags,
          metadata: e.metadata,
          sources: e.sources,
          validFrom: date(e.validFrom),
          validUntil: date(e.validUntil),
          expiresAt: date(e.expiresAt),
          status: e.status ?? null,
          quarantineReasons: e.quarantineReasons ?? null,
          actor: e.actor,
          at: new Date(e.at),
        })),
    );
    for (let i = 0; i < events.length; i += 500) await tx.insert(memoryHistory).values(events.slice(i, i + 500));
    return { imported: rows.length, historyEvents: events.length };
  }

  return { import: importMemories, embedAhead };
}

export type MemoryImporter = ReturnType<typeof createMemoryImporter>;
