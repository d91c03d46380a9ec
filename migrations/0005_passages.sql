ALTER TABLE "chunks" ALTER COLUMN "bm25_length" DROP NOT NULL;--> statement-breakpoint
-- Chunks indexed before passages existed keep their own postings (each a passage of one chunk) until
-- the server regroups them at start (src/knowledge/passage-regrouping.ts): the analyzer and the
-- tokenizer are TypeScript. Their documents keep passage_tokens NULL until then.
ALTER TABLE "chunks" ADD COLUMN "passage_id" uuid;--> statement-breakpoint
UPDATE "chunks" SET "passage_id" = "id";--> statement-breakpoint
ALTER TABLE "chunks" ALTER COLUMN "passage_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "documents" ADD COLUMN "passage_tokens" integer;--> statement-breakpoint
CREATE INDEX "chunks_passage_idx" ON "chunks" USING btree ("passage_id");
