CREATE TABLE "memory_history" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "memory_history_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"memory_id" uuid NOT NULL,
	"agent_id" text NOT NULL,
	"user_id" text DEFAULT '' NOT NULL,
	"key" text NOT NULL,
	"event" text NOT NULL,
	"content" text,
	"previous_content" text,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"previous_tags" text[],
	"actor" jsonb NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "turn_corpus_stats" (
	"tenant_id" text PRIMARY KEY DEFAULT 'default' NOT NULL,
	"total" bigint DEFAULT 0 NOT NULL,
	"total_length" bigint DEFAULT 0 NOT NULL,
	"analyzer_id" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "turn_postings" (
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"turn_id" uuid NOT NULL,
	"term" text NOT NULL,
	"tf" integer NOT NULL,
	CONSTRAINT "turn_postings_tenant_id_term_turn_id_pk" PRIMARY KEY("tenant_id","term","turn_id")
);
--> statement-breakpoint
CREATE TABLE "turn_term_stats" (
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"term" text NOT NULL,
	"df" integer NOT NULL,
	CONSTRAINT "turn_term_stats_tenant_id_term_pk" PRIMARY KEY("tenant_id","term")
);
--> statement-breakpoint
CREATE TABLE "turns" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"conversation_id" uuid NOT NULL,
	"agent_id" text NOT NULL,
	"user_id" text DEFAULT '' NOT NULL,
	"turn" integer NOT NULL,
	"question" text NOT NULL,
	"answer" text NOT NULL,
	"before" text DEFAULT '' NOT NULL,
	"after" text DEFAULT '' NOT NULL,
	"embedded_text" text NOT NULL,
	"embedding" vector,
	"bm25_length" integer,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
DROP INDEX "memories_tenant_agent_key_idx";--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "user_id" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "user_id" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "valid_to" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "turn_postings" ADD CONSTRAINT "turn_postings_turn_id_turns_id_fk" FOREIGN KEY ("turn_id") REFERENCES "public"."turns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "turns" ADD CONSTRAINT "turns_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memory_history_scope_key_idx" ON "memory_history" USING btree ("tenant_id","agent_id","user_id","key","id");--> statement-breakpoint
CREATE INDEX "memory_history_memory_idx" ON "memory_history" USING btree ("memory_id","id");--> statement-breakpoint
CREATE INDEX "turn_postings_turn_idx" ON "turn_postings" USING btree ("turn_id");--> statement-breakpoint
CREATE UNIQUE INDEX "turns_conversation_turn_idx" ON "turns" USING btree ("conversation_id","turn");--> statement-breakpoint
CREATE INDEX "turns_tenant_agent_user_idx" ON "turns" USING btree ("tenant_id","agent_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "memories_tenant_agent_user_key_idx" ON "memories" USING btree ("tenant_id","agent_id","user_id","key");--> statement-breakpoint
CREATE INDEX "memories_metadata_gin_idx" ON "memories" USING gin ("metadata" jsonb_path_ops) WITH (fastupdate=false);--> statement-breakpoint
CREATE INDEX "memories_expires_idx" ON "memories" USING btree ("expires_at") WHERE expires_at IS NOT NULL;