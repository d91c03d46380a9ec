ALTER TABLE "runs" ADD COLUMN "thread_key" text;--> statement-breakpoint
CREATE INDEX "runs_tenant_thread_key_idx" ON "runs" USING btree ("tenant_id","thread_key") WHERE thread_key IS NOT NULL;