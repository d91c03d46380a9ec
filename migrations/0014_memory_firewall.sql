ALTER TABLE "memories" ADD COLUMN "status" text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "quarantine_reasons" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
CREATE INDEX "memories_quarantined_idx" ON "memories" USING btree ("tenant_id","agent_id") WHERE status = 'quarantined';