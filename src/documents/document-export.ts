import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { documents } from '../db/schema/index.js';

/** A document as an export carries it: its extracted text and fields, not its chunks (an import re-ingests the text). */
export interface ExportedDocument {
  id: string;
  title: string;
  source: string | null;
  format: string;
  tags: string[];
  metadata: Record<string, unknown>;
  text: string;
  createdAt: string;
  updatedAt: string;
}

/** The tenant's documents by id, `pageSize` at a time (their texts may be large). */
export async function* exportDocuments(db: Db, tenantId: string, pageSize = 20): AsyncGenerator<ExportedDocument> {
  let after: string | undefined;
  for (;;) {
    const rows = await db
      .select({
        id: documents.id,
        title: documents.title,
        source: documents.source,
        format: documents.format,
        tags: documents.tags,
        metadata: documents.metadata,
        text: documents.text,
        createdAt: documents.createdAt,
        updatedAt: documents.updatedAt,
      })
      .from(documents)
      .where(and(eq(documents.tenantId, tenantId), after !== undefined ? sql`${documents.id} > ${after}::uuid` : undefined))
      .orderBy(asc(documents.id))
      .limit(pageSize);
    for (const r of rows) yield { ...r, createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() };
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!.id;
  }
}
