CREATE TABLE "vector_filter_stats" (
	"table_name" text NOT NULL,
	"tenant_id" text NOT NULL,
	"scope" text NOT NULL,
	"tag" text NOT NULL,
	"rows" bigint NOT NULL,
	CONSTRAINT "vector_filter_stats_table_name_tenant_id_scope_tag_pk" PRIMARY KEY("table_name","tenant_id","scope","tag")
);
--> statement-breakpoint
-- Each write statement adds its rows' deltas (+1 per new row, -1 per old one) to their scopes and
-- tags, in the writer's transaction: a search sees counts as exact as the rows it can see.
-- Statement-level with transition tables, so a bulk insert costs one upsert, not one per row; an
-- update that moves no row between scopes or tags nets to nothing and writes nothing.
CREATE FUNCTION memories_filter_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, rows)
    SELECT 'memories', r.tenant_id, sc.scope, t.tag, sum(r.n) FROM (SELECT tenant_id, agent_id, user_id, tags, 1 AS n FROM new_rows) r
      CROSS JOIN LATERAL (VALUES (r.agent_id), (r.agent_id || chr(31) || r.user_id)) AS sc(scope)
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 3, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 3, 4
    ON CONFLICT (table_name, tenant_id, scope, tag) DO UPDATE SET rows = s.rows + excluded.rows;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, rows)
    SELECT 'memories', r.tenant_id, sc.scope, t.tag, sum(r.n) FROM (SELECT tenant_id, agent_id, user_id, tags, -1 AS n FROM old_rows) r
      CROSS JOIN LATERAL (VALUES (r.agent_id), (r.agent_id || chr(31) || r.user_id)) AS sc(scope)
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 3, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 3, 4
    ON CONFLICT (table_name, tenant_id, scope, tag) DO UPDATE SET rows = s.rows + excluded.rows;
  ELSE
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, rows)
    SELECT 'memories', r.tenant_id, sc.scope, t.tag, sum(r.n) FROM (
        SELECT tenant_id, agent_id, user_id, tags, 1 AS n FROM new_rows
        UNION ALL SELECT tenant_id, agent_id, user_id, tags, -1 FROM old_rows) r
      CROSS JOIN LATERAL (VALUES (r.agent_id), (r.agent_id || chr(31) || r.user_id)) AS sc(scope)
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 3, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 3, 4
    ON CONFLICT (table_name, tenant_id, scope, tag) DO UPDATE SET rows = s.rows + excluded.rows;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION chunks_filter_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, rows)
    SELECT 'chunks', r.tenant_id, '', t.tag, sum(r.n) FROM (SELECT tenant_id, tags, 1 AS n FROM new_rows) r
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 4
    ON CONFLICT (table_name, tenant_id, scope, tag) DO UPDATE SET rows = s.rows + excluded.rows;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, rows)
    SELECT 'chunks', r.tenant_id, '', t.tag, sum(r.n) FROM (SELECT tenant_id, tags, -1 AS n FROM old_rows) r
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 4
    ON CONFLICT (table_name, tenant_id, scope, tag) DO UPDATE SET rows = s.rows + excluded.rows;
  ELSE
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, rows)
    SELECT 'chunks', r.tenant_id, '', t.tag, sum(r.n) FROM (
        SELECT tenant_id, tags, 1 AS n FROM new_rows UNION ALL SELECT tenant_id, tags, -1 FROM old_rows) r
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 4
    ON CONFLICT (table_name, tenant_id, scope, tag) DO UPDATE SET rows = s.rows + excluded.rows;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER memories_filter_stats_insert AFTER INSERT ON memories REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memories_filter_stats();
--> statement-breakpoint
CREATE TRIGGER memories_filter_stats_update AFTER UPDATE ON memories REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memories_filter_stats();
--> statement-breakpoint
CREATE TRIGGER memories_filter_stats_delete AFTER DELETE ON memories REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memories_filter_stats();
--> statement-breakpoint
CREATE TRIGGER chunks_filter_stats_insert AFTER INSERT ON chunks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chunks_filter_stats();
--> statement-breakpoint
CREATE TRIGGER chunks_filter_stats_update AFTER UPDATE ON chunks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chunks_filter_stats();
--> statement-breakpoint
CREATE TRIGGER chunks_filter_stats_delete AFTER DELETE ON chunks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chunks_filter_stats();
--> statement-breakpoint
-- The rows already there (the table is new, so nothing else wrote it yet).
INSERT INTO vector_filter_stats (table_name, tenant_id, scope, tag, rows)
SELECT 'memories', m.tenant_id, sc.scope, t.tag, count(*) FROM memories m
  CROSS JOIN LATERAL (VALUES (m.agent_id), (m.agent_id || chr(31) || m.user_id)) AS sc(scope)
  CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(m.tags)) AS t(tag)
GROUP BY 2, 3, 4;
--> statement-breakpoint
INSERT INTO vector_filter_stats (table_name, tenant_id, scope, tag, rows)
SELECT 'chunks', c.tenant_id, '', t.tag, count(*) FROM chunks c
  CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(c.tags)) AS t(tag)
GROUP BY 2, 4;
--> statement-breakpoint
-- The memories' graph is rebuilt denser (ef_construction 128; see MEMORY_HNSW in vector-space.ts):
-- dropped here, built again over the rows there by ensureVectorSpace at the next start.
DROP INDEX IF EXISTS memories_embedding_hnsw_idx;
