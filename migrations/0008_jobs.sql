CREATE TABLE "jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"parent_id" uuid,
	"payload" jsonb NOT NULL,
	"content" text,
	"progress" jsonb NOT NULL,
	"event_seq" integer DEFAULT 0 NOT NULL,
	"result" jsonb,
	"error" jsonb,
	"attempt" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer DEFAULT 3 NOT NULL,
	"run_at" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_until" timestamp with time zone,
	"worker_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "jobs_status" CHECK ("jobs"."status" IN ('queued', 'running', 'succeeded', 'failed', 'cancelled'))
);
--> statement-breakpoint
CREATE INDEX "jobs_tenant_created_idx" ON "jobs" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "jobs_parent_idx" ON "jobs" USING btree ("parent_id") WHERE parent_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "jobs_open_idx" ON "jobs" USING btree ("run_at") WHERE status IN ('queued', 'running');