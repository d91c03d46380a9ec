-- Tenants (issue 6): API keys, and a tenant on every tenant-owned row. Existing rows, statistics
-- included, belong to tenant 'default' through the column default. drizzle-kit's generated order
-- (primary keys before their columns, unnamed primary keys left commented out) could not run, so
-- the statements are ordered by hand; the resulting schema is the snapshot's.
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"key_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_hash_idx" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_prefix_idx" ON "api_keys" USING btree ("prefix");--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "tenant_id" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "documents" ADD COLUMN "tenant_id" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "chunks" ADD COLUMN "tenant_id" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "tenant_id" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_postings" ADD COLUMN "tenant_id" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "postings" ADD COLUMN "tenant_id" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_term_stats" ADD COLUMN "tenant_id" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "term_stats" ADD COLUMN "tenant_id" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
DROP INDEX "memories_agent_key_idx";--> statement-breakpoint
DROP INDEX "memories_agent_created_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "memories_tenant_agent_key_idx" ON "memories" USING btree ("tenant_id","agent_id","key");--> statement-breakpoint
CREATE INDEX "memories_tenant_agent_created_idx" ON "memories" USING btree ("tenant_id","agent_id","created_at","id");--> statement-breakpoint
DROP INDEX "documents_source_idx";--> statement-breakpoint
DROP INDEX "documents_content_hash_idx";--> statement-breakpoint
DROP INDEX "documents_created_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "documents_tenant_source_idx" ON "documents" USING btree ("tenant_id","source");--> statement-breakpoint
CREATE UNIQUE INDEX "documents_tenant_content_hash_idx" ON "documents" USING btree ("tenant_id","content_hash");--> statement-breakpoint
CREATE INDEX "documents_tenant_created_idx" ON "documents" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "chunks_tenant_idx" ON "chunks" USING btree ("tenant_id");--> statement-breakpoint
DROP INDEX "conversations_agent_created_idx";--> statement-breakpoint
CREATE INDEX "conversations_tenant_agent_created_idx" ON "conversations" USING btree ("tenant_id","agent_id","created_at","id");--> statement-breakpoint
ALTER TABLE "memory_postings" DROP CONSTRAINT "memory_postings_term_memory_id_pk";--> statement-breakpoint
ALTER TABLE "memory_postings" ADD CONSTRAINT "memory_postings_tenant_id_term_memory_id_pk" PRIMARY KEY("tenant_id","term","memory_id");--> statement-breakpoint
ALTER TABLE "postings" DROP CONSTRAINT "postings_term_chunk_id_pk";--> statement-breakpoint
ALTER TABLE "postings" ADD CONSTRAINT "postings_tenant_id_term_chunk_id_pk" PRIMARY KEY("tenant_id","term","chunk_id");--> statement-breakpoint
ALTER TABLE "memory_term_stats" DROP CONSTRAINT "memory_term_stats_pkey";--> statement-breakpoint
ALTER TABLE "memory_term_stats" ADD CONSTRAINT "memory_term_stats_tenant_id_term_pk" PRIMARY KEY("tenant_id","term");--> statement-breakpoint
ALTER TABLE "term_stats" DROP CONSTRAINT "term_stats_pkey";--> statement-breakpoint
ALTER TABLE "term_stats" ADD CONSTRAINT "term_stats_tenant_id_term_pk" PRIMARY KEY("tenant_id","term");--> statement-breakpoint
-- The single statistics row (id = 1) becomes tenant 'default''s row.
ALTER TABLE "corpus_stats" DROP CONSTRAINT "corpus_stats_single_row";--> statement-breakpoint
ALTER TABLE "corpus_stats" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "corpus_stats" ADD COLUMN "tenant_id" text PRIMARY KEY DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_corpus_stats" DROP CONSTRAINT "memory_corpus_stats_single_row";--> statement-breakpoint
ALTER TABLE "memory_corpus_stats" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "memory_corpus_stats" ADD COLUMN "tenant_id" text PRIMARY KEY DEFAULT 'default' NOT NULL;
