-- pgvector stores its type out of line, and a row past 2 KB has its largest values moved to the
-- TOAST table: a 512-d vector (2 KB) always was, so each distance read from the heap fetched two
-- TOAST chunks through their index. With the toaster's target at a full page, a row is compressed or
-- moved out only when it no longer fits one. An exact scan of 250 rows out of 20k took 2.96 ms
-- before and 1.16 ms after on PostgreSQL, 4.58 and 3.05 on PGlite (`npm run bench:vector-layout`). Rows
-- written before keep their layout until they are rewritten.
ALTER TABLE "memories" SET (toast_tuple_target = 8160);
--> statement-breakpoint
ALTER TABLE "chunks" SET (toast_tuple_target = 8160);
--> statement-breakpoint
ALTER TABLE "turns" SET (toast_tuple_target = 8160);
