ALTER TABLE "postings" DROP CONSTRAINT "postings_chunk_id_chunks_id_fk";
--> statement-breakpoint
ALTER TABLE "memory_postings" DROP CONSTRAINT "memory_postings_memory_id_memories_id_fk";
--> statement-breakpoint
ALTER TABLE "turn_postings" DROP CONSTRAINT "turn_postings_turn_id_turns_id_fk";
--> statement-breakpoint
-- The keys above checked every posting's row (a lookup and a row lock each: 40% of an import's
-- postings insert) and deleted a deleted row's postings. The check goes: postings are written only
-- for rows their own transaction inserted or holds under the tenant's corpus lock. The delete stays,
-- once per statement: every path that deletes indexed rows takes their postings out first (the
-- statistics need them), so this finds nothing then, and catches any other delete.
CREATE FUNCTION delete_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- TG_ARGV: the postings table, and its column naming the indexed row.
  EXECUTE format('DELETE FROM %I p USING gone g WHERE p.%I = g.id', TG_ARGV[0], TG_ARGV[1]);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER chunks_delete_postings AFTER DELETE ON chunks REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION delete_postings('postings', 'chunk_id');
--> statement-breakpoint
CREATE TRIGGER memories_delete_postings AFTER DELETE ON memories REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION delete_postings('memory_postings', 'memory_id');
--> statement-breakpoint
CREATE TRIGGER turns_delete_postings AFTER DELETE ON turns REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION delete_postings('turn_postings', 'turn_id');
