-- Counter rows every writer rewrites (document frequencies, filter counts, corpus totals): room
-- on their pages, so that a rewrite stays on its page (a HOT update: no new index entry, and the
-- old version pruned by the next reader of the page without waiting for a vacuum), and a vacuum
-- as soon as a few hundred dead versions pile up rather than a tenth of the table.
ALTER TABLE "memory_term_stats" SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 200);
--> statement-breakpoint
ALTER TABLE "term_stats" SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 200);
--> statement-breakpoint
ALTER TABLE "turn_term_stats" SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 200);
--> statement-breakpoint
ALTER TABLE "vector_filter_stats" SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 200);
--> statement-breakpoint
ALTER TABLE "memory_corpus_stats" SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100);
--> statement-breakpoint
ALTER TABLE "corpus_stats" SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100);
--> statement-breakpoint
ALTER TABLE "turn_corpus_stats" SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100);
--> statement-breakpoint
-- The tables searches are planned over: statistics after 5% of change rather than 10%, on the
-- server's autovacuum and on the store's own check (src/db/table-statistics.ts), which reads these.
ALTER TABLE "memory_postings" SET (autovacuum_analyze_scale_factor = 0.05);
--> statement-breakpoint
ALTER TABLE "postings" SET (autovacuum_analyze_scale_factor = 0.05);
--> statement-breakpoint
ALTER TABLE "turn_postings" SET (autovacuum_analyze_scale_factor = 0.05);
--> statement-breakpoint
ALTER TABLE "memories" SET (autovacuum_analyze_scale_factor = 0.05);
--> statement-breakpoint
ALTER TABLE "turns" SET (autovacuum_analyze_scale_factor = 0.05);
--> statement-breakpoint
ALTER TABLE "chunks" SET (autovacuum_analyze_scale_factor = 0.05);
