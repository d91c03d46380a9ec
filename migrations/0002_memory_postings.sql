CREATE TABLE "memory_corpus_stats" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"total" bigint DEFAULT 0 NOT NULL,
	"total_length" bigint DEFAULT 0 NOT NULL,
	"analyzer_id" text NOT NULL,
	CONSTRAINT "memory_corpus_stats_single_row" CHECK ("memory_corpus_stats"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "memory_postings" (
	"memory_id" uuid NOT NULL,
	"term" text NOT NULL,
	"tf" integer NOT NULL,
	CONSTRAINT "memory_postings_term_memory_id_pk" PRIMARY KEY("term","memory_id")
);
--> statement-breakpoint
CREATE TABLE "memory_term_stats" (
	"term" text PRIMARY KEY NOT NULL,
	"df" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "bm25_length" integer;--> statement-breakpoint
ALTER TABLE "memory_postings" ADD CONSTRAINT "memory_postings_memory_id_memories_id_fk" FOREIGN KEY ("memory_id") REFERENCES "public"."memories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memory_postings_memory_idx" ON "memory_postings" USING btree ("memory_id");--> statement-breakpoint
CREATE INDEX "memories_unindexed_idx" ON "memories" USING btree ("id") WHERE bm25_length IS NULL;