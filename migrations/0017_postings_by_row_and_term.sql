-- The postings by indexed row, now with the term and the counts: a search narrowed to a few rows
-- (one user's turns in a tenant of many) scores them by probing this index for the query's terms
-- of each row, rather than reading every posting of those terms in the tenant.
DROP INDEX "postings_chunk_idx";--> statement-breakpoint
DROP INDEX "memory_postings_memory_idx";--> statement-breakpoint
DROP INDEX "turn_postings_turn_idx";--> statement-breakpoint
CREATE INDEX "postings_chunk_idx" ON "postings" USING btree ("chunk_id","term") INCLUDE ("tf", "doc_length");--> statement-breakpoint
CREATE INDEX "memory_postings_memory_idx" ON "memory_postings" USING btree ("memory_id","term") INCLUDE ("tf", "doc_length");--> statement-breakpoint
CREATE INDEX "turn_postings_turn_idx" ON "turn_postings" USING btree ("turn_id","term") INCLUDE ("tf", "doc_length");
