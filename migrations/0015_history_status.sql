ALTER TABLE "memory_history" ADD COLUMN "status" text;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "quarantine_reasons" text[];