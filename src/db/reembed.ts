import { sql } from 'drizzle-orm';
import type { Embedder } from '../embeddings/embedder.js';
import type { Db } from './database.js';
import { queryRows } from './query-rows.js';
import { ident } from './sql-identifier.js';
import { VECTOR_TABLES, type VectorTable, recordSpace, releaseColumnDimensions, setColumnDimensions } from './vector-space.js';

export interface ReembedProgress {
  table: string;
  done: number;
  total: number;
}

/**
 * Re-embeds every vector table with `embedder` in one transaction: readers see the old space
 * or the new one, never a mix, and a failure part-way leaves the store as it was.
 */
export async function reembedAll(
  db: Db,
  embedder: Embedder,
  options: { batchSize?: number; tables?: readonly VectorTable[]; onProgress?: (p: ReembedProgress) => void } = {},
): Promise<{ table: string; rows: number }[]> {
  const batchSize = options.batchSize ?? 64;
  const summary: { table: string; rows: number }[] = [];
  await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(727274102)`);
    for (const t of options.tables ?? VECTOR_TABLES) {
      const [count] = await queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM ${ident(t.table)}`);
      const total = Number(count?.n ?? 0);
      await releaseColumnDimensions(tx, t);
      let done = 0;
      let lastId: string | null = null;
      for (;;) {
        const after = lastId === null ? sql`` : sql`WHERE id > ${lastId}`;
        const rows: { id: string; text: string }[] = await queryRows<{ id: string; text: string }>(
          tx,
          sql`SELECT id::text AS id, ${t.textExpression ? sql.raw(t.textExpression) : ident(t.textColumn)} AS text FROM ${ident(t.table)} ${after} ORDER BY id LIMIT ${batchSize}`,
        );
        if (rows.length === 0) break;
        const vectors = await embedder.embed(rows.map((r) => r.text));
        const values = sql.join(
          rows.map((r, i) => sql`(${r.id}::uuid, ${`[${vectors[i]!.join(',')}]`}::vector)`),
          sql`, `,
        );
        await tx.execute(
          sql`UPDATE ${ident(t.table)} AS t SET ${ident(t.embeddingColumn)} = v.embedding FROM (VALUES ${values}) AS v(id, embedding) WHERE t.id = v.id`,
        );
        done += rows.length;
        lastId = rows[rows.length - 1]!.id;
        options.onProgress?.({ table: t.table, done, total });
      }
      await setColumnDimensions(tx, t, embedder.dimensions);
      await recordSpace(tx, t.table, { embedderId: embedder.id, dimensions: embedder.dimensions });
      summary.push({ table: t.table, rows: done });
    }
  });
  return summary;
}
