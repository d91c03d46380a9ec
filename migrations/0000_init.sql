CREATE EXTENSION IF NOT EXISTS vector;
--> statement-breakpoint
CREATE TABLE "memories" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"agent_id" text NOT NULL,
	"key" text NOT NULL,
	"content" text NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"embedding" vector,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vector_spaces" (
	"table_name" text PRIMARY KEY NOT NULL,
	"embedder_id" text NOT NULL,
	"dimensions" integer NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "memories_agent_key_idx" ON "memories" USING btree ("agent_id","key");--> statement-breakpoint
CREATE INDEX "memories_tags_gin_idx" ON "memories" USING gin ("tags") WITH (fastupdate=false);--> statement-breakpoint
CREATE INDEX "memories_agent_created_idx" ON "memories" USING btree ("agent_id","created_at","id");