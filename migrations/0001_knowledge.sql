CREATE TABLE "chunks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"document_id" uuid NOT NULL,
	"index" integer NOT NULL,
	"text" text NOT NULL,
	"context" text DEFAULT '' NOT NULL,
	"heading_path" text[] DEFAULT '{}'::text[] NOT NULL,
	"start" integer NOT NULL,
	"end" integer NOT NULL,
	"token_count" integer NOT NULL,
	"bm25_length" integer NOT NULL,
	"embedding" vector,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL
);
--> statement-breakpoint
CREATE TABLE "corpus_stats" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"total_chunks" bigint DEFAULT 0 NOT NULL,
	"total_length" bigint DEFAULT 0 NOT NULL,
	"analyzer_id" text NOT NULL,
	CONSTRAINT "corpus_stats_single_row" CHECK ("corpus_stats"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "documents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"title" text NOT NULL,
	"source" text,
	"content_hash" text NOT NULL,
	"format" text NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"text" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "postings" (
	"chunk_id" uuid NOT NULL,
	"term" text NOT NULL,
	"tf" integer NOT NULL,
	CONSTRAINT "postings_term_chunk_id_pk" PRIMARY KEY("term","chunk_id")
);
--> statement-breakpoint
CREATE TABLE "term_stats" (
	"term" text PRIMARY KEY NOT NULL,
	"df" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chunks" ADD CONSTRAINT "chunks_document_id_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "postings" ADD CONSTRAINT "postings_chunk_id_chunks_id_fk" FOREIGN KEY ("chunk_id") REFERENCES "public"."chunks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "chunks_document_index_idx" ON "chunks" USING btree ("document_id","index");--> statement-breakpoint
CREATE INDEX "chunks_tags_gin_idx" ON "chunks" USING gin ("tags") WITH (fastupdate=false);--> statement-breakpoint
CREATE UNIQUE INDEX "documents_source_idx" ON "documents" USING btree ("source");--> statement-breakpoint
CREATE UNIQUE INDEX "documents_content_hash_idx" ON "documents" USING btree ("content_hash");--> statement-breakpoint
CREATE INDEX "documents_tags_gin_idx" ON "documents" USING gin ("tags") WITH (fastupdate=false);--> statement-breakpoint
CREATE INDEX "documents_created_idx" ON "documents" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "postings_chunk_idx" ON "postings" USING btree ("chunk_id");