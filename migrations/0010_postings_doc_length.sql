-- Each posting carries its row's length (the row's own length column, as BM25 read it from the
-- row): a text search scores from the postings alone and reads a row only to test the filter, for
-- as many top-scored rows as it takes to fill the page. The primary key covers tf and the length,
-- so the scoring reads the key's leaf pages by term and no heap page.
ALTER TABLE "memory_postings" ADD COLUMN "doc_length" integer;--> statement-breakpoint
ALTER TABLE "postings" ADD COLUMN "doc_length" integer;--> statement-breakpoint
ALTER TABLE "turn_postings" ADD COLUMN "doc_length" integer;--> statement-breakpoint
-- A length is the sum of its row's term frequencies; the row's column is taken where it is set,
-- so every score stays what it was.
UPDATE "memory_postings" p SET "doc_length" = coalesce(r."bm25_length", s.len)
  FROM (SELECT "memory_id", sum("tf")::int AS len FROM "memory_postings" GROUP BY "memory_id") s
  LEFT JOIN "memories" r ON r."id" = s."memory_id"
  WHERE p."memory_id" = s."memory_id";--> statement-breakpoint
UPDATE "postings" p SET "doc_length" = coalesce(r."bm25_length", s.len)
  FROM (SELECT "chunk_id", sum("tf")::int AS len FROM "postings" GROUP BY "chunk_id") s
  LEFT JOIN "chunks" r ON r."id" = s."chunk_id"
  WHERE p."chunk_id" = s."chunk_id";--> statement-breakpoint
UPDATE "turn_postings" p SET "doc_length" = coalesce(r."bm25_length", s.len)
  FROM (SELECT "turn_id", sum("tf")::int AS len FROM "turn_postings" GROUP BY "turn_id") s
  LEFT JOIN "turns" r ON r."id" = s."turn_id"
  WHERE p."turn_id" = s."turn_id";--> statement-breakpoint
ALTER TABLE "memory_postings" ALTER COLUMN "doc_length" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "postings" ALTER COLUMN "doc_length" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "turn_postings" ALTER COLUMN "doc_length" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_postings" DROP CONSTRAINT "memory_postings_tenant_id_term_memory_id_pk",
  ADD CONSTRAINT "memory_postings_tenant_id_term_memory_id_pk" PRIMARY KEY ("tenant_id", "term", "memory_id") INCLUDE ("tf", "doc_length");--> statement-breakpoint
ALTER TABLE "postings" DROP CONSTRAINT "postings_tenant_id_term_chunk_id_pk",
  ADD CONSTRAINT "postings_tenant_id_term_chunk_id_pk" PRIMARY KEY ("tenant_id", "term", "chunk_id") INCLUDE ("tf", "doc_length");--> statement-breakpoint
ALTER TABLE "turn_postings" DROP CONSTRAINT "turn_postings_tenant_id_term_turn_id_pk",
  ADD CONSTRAINT "turn_postings_tenant_id_term_turn_id_pk" PRIMARY KEY ("tenant_id", "term", "turn_id") INCLUDE ("tf", "doc_length");
