ALTER TABLE "chunks" ALTER COLUMN "bm25_length" DROP NOT NULL;--> statement-breakpoint
-- Chunks indexed before passages existed keep their own postings: each is a passage of one chunk.
ALTER TABLE "chunks" ADD COLUMN "passage_id" uuid;--> statement-breakpoint
UPDATE "chunks" SET "passage_id" = "id";--> statement-breakpoint
ALTER TABLE "chunks" ALTER COLUMN "passage_id" SET NOT NULL;--> statement-breakpoint
CREATE INDEX "chunks_passage_idx" ON "chunks" USING btree ("passage_id");
