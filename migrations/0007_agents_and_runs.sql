CREATE TABLE "agent_versions" (
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"agent_id" text NOT NULL,
	"version" integer NOT NULL,
	"settings" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_versions_tenant_id_agent_id_version_pk" PRIMARY KEY("tenant_id","agent_id","version")
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"id" text NOT NULL,
	"version" integer NOT NULL,
	"settings" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agents_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"agent_id" text NOT NULL,
	"user_id" text DEFAULT '' NOT NULL,
	"conversation_id" uuid NOT NULL,
	"agent_version" integer,
	"status" text NOT NULL,
	"stop_reason" text,
	"usage" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"state" jsonb,
	"error" jsonb,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "runs_status" CHECK ("runs"."status" IN ('running', 'requires_action', 'requires_approval', 'completed', 'failed', 'cancelled', 'expired'))
);
--> statement-breakpoint
CREATE INDEX "agents_tenant_created_idx" ON "agents" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "runs_tenant_created_idx" ON "runs" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "runs_waiting_conversation_idx" ON "runs" USING btree ("conversation_id") WHERE status IN ('requires_action', 'requires_approval');--> statement-breakpoint
CREATE INDEX "runs_open_idx" ON "runs" USING btree ("status","updated_at") WHERE status IN ('running', 'requires_action', 'requires_approval');