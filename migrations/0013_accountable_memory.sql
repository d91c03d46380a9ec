CREATE TABLE "audit_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"action" text NOT NULL,
	"user_id" text DEFAULT '' NOT NULL,
	"actor" jsonb NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "user_id" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "sources" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "valid_from" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "valid_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "metadata" jsonb;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "sources" jsonb;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "valid_from" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "valid_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "audit_log_tenant_idx" ON "audit_log" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE INDEX "audit_log_tenant_user_idx" ON "audit_log" USING btree ("tenant_id","user_id","id");--> statement-breakpoint
CREATE INDEX "jobs_user_idx" ON "jobs" USING btree ("tenant_id","user_id") WHERE user_id <> '';--> statement-breakpoint
CREATE INDEX "memories_tenant_updated_idx" ON "memories" USING btree ("tenant_id","updated_at");--> statement-breakpoint
CREATE INDEX "memories_sources_gin_idx" ON "memories" USING gin ("sources" jsonb_path_ops);--> statement-breakpoint
CREATE INDEX "memory_history_scope_at_idx" ON "memory_history" USING btree ("tenant_id","agent_id","user_id","at");--> statement-breakpoint
UPDATE "memories" m SET "sources" = jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
	'actor', h.actor->>'type', 'conversationId', h.actor->'conversationId', 'turn', h.actor->'turn', 'at', to_jsonb(h.at))))
FROM (SELECT DISTINCT ON (memory_id) memory_id, actor, at FROM "memory_history" WHERE event = 'created' ORDER BY memory_id, id DESC) h
WHERE h.memory_id = m.id;
