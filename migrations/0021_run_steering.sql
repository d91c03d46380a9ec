ALTER TABLE "runs" DROP CONSTRAINT "runs_status";--> statement-breakpoint
DROP INDEX "runs_waiting_conversation_idx";--> statement-breakpoint
DROP INDEX "runs_open_idx";--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "follow_ups" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX "runs_waiting_conversation_idx" ON "runs" USING btree ("conversation_id") WHERE status IN ('requires_action', 'requires_approval', 'paused');--> statement-breakpoint
CREATE INDEX "runs_open_idx" ON "runs" USING btree ("status","updated_at") WHERE status IN ('running', 'requires_action', 'requires_approval', 'paused');--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_status" CHECK ("runs"."status" IN ('running', 'requires_action', 'requires_approval', 'paused', 'completed', 'failed', 'cancelled', 'expired'));
