CREATE TABLE "block_history" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "block_history_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"user_id" text DEFAULT '' NOT NULL,
	"label" text NOT NULL,
	"event" text NOT NULL,
	"value" text,
	"description" text,
	"char_limit" integer,
	"read_only" boolean,
	"schema" jsonb,
	"status" text DEFAULT 'applied' NOT NULL,
	"quarantine_reasons" text[],
	"actor" jsonb NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "blocks" (
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"user_id" text DEFAULT '' NOT NULL,
	"label" text NOT NULL,
	"value" text NOT NULL,
	"description" text,
	"char_limit" integer NOT NULL,
	"read_only" boolean DEFAULT false NOT NULL,
	"schema" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "blocks_tenant_id_agent_id_user_id_label_pk" PRIMARY KEY("tenant_id","agent_id","user_id","label")
);
--> statement-breakpoint
CREATE INDEX "block_history_scope_label_idx" ON "block_history" USING btree ("tenant_id","agent_id","user_id","label","id");--> statement-breakpoint
CREATE INDEX "block_history_tenant_user_idx" ON "block_history" USING btree ("tenant_id","user_id");--> statement-breakpoint
CREATE INDEX "blocks_tenant_user_idx" ON "blocks" USING btree ("tenant_id","user_id");