ALTER TABLE "vector_filter_stats" ADD COLUMN "shard" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "vector_filter_stats" DROP CONSTRAINT "vector_filter_stats_table_name_tenant_id_scope_tag_pk";--> statement-breakpoint
ALTER TABLE "vector_filter_stats" ADD CONSTRAINT "vector_filter_stats_table_name_tenant_id_scope_tag_shard_pk" PRIMARY KEY("table_name","tenant_id","scope","tag","shard");--> statement-breakpoint
-- A count is the sum of 16 shard rows. Each writing transaction adds to the one its id picks:
-- with one row a count, every writer of an agent (or of a popular tag) held that row from its
-- first insert until it committed, so one tenant's saves ran one at a time. Two transactions
-- share a row one time in 16, and then wait as before. Rows already counted stay in shard 0.
CREATE FUNCTION vector_filter_stats_shard() RETURNS smallint LANGUAGE sql VOLATILE AS $$ SELECT (txid_current() % 16)::smallint $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION memories_filter_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, shard, rows)
    SELECT 'memories', r.tenant_id, sc.scope, t.tag, vector_filter_stats_shard(), sum(r.n) FROM (SELECT tenant_id, agent_id, user_id, tags, 1 AS n FROM new_rows) r
      CROSS JOIN LATERAL (VALUES (r.agent_id), (r.agent_id || chr(31) || r.user_id)) AS sc(scope)
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 3, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 3, 4
    ON CONFLICT (table_name, tenant_id, scope, tag, shard) DO UPDATE SET rows = s.rows + excluded.rows;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, shard, rows)
    SELECT 'memories', r.tenant_id, sc.scope, t.tag, vector_filter_stats_shard(), sum(r.n) FROM (SELECT tenant_id, agent_id, user_id, tags, -1 AS n FROM old_rows) r
      CROSS JOIN LATERAL (VALUES (r.agent_id), (r.agent_id || chr(31) || r.user_id)) AS sc(scope)
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 3, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 3, 4
    ON CONFLICT (table_name, tenant_id, scope, tag, shard) DO UPDATE SET rows = s.rows + excluded.rows;
  ELSE
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, shard, rows)
    SELECT 'memories', r.tenant_id, sc.scope, t.tag, vector_filter_stats_shard(), sum(r.n) FROM (
        SELECT tenant_id, agent_id, user_id, tags, 1 AS n FROM new_rows
        UNION ALL SELECT tenant_id, agent_id, user_id, tags, -1 FROM old_rows) r
      CROSS JOIN LATERAL (VALUES (r.agent_id), (r.agent_id || chr(31) || r.user_id)) AS sc(scope)
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 3, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 3, 4
    ON CONFLICT (table_name, tenant_id, scope, tag, shard) DO UPDATE SET rows = s.rows + excluded.rows;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION chunks_filter_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, shard, rows)
    SELECT 'chunks', r.tenant_id, '', t.tag, vector_filter_stats_shard(), sum(r.n) FROM (SELECT tenant_id, tags, 1 AS n FROM new_rows) r
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 4
    ON CONFLICT (table_name, tenant_id, scope, tag, shard) DO UPDATE SET rows = s.rows + excluded.rows;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, shard, rows)
    SELECT 'chunks', r.tenant_id, '', t.tag, vector_filter_stats_shard(), sum(r.n) FROM (SELECT tenant_id, tags, -1 AS n FROM old_rows) r
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 4
    ON CONFLICT (table_name, tenant_id, scope, tag, shard) DO UPDATE SET rows = s.rows + excluded.rows;
  ELSE
    INSERT INTO vector_filter_stats AS s (table_name, tenant_id, scope, tag, shard, rows)
    SELECT 'chunks', r.tenant_id, '', t.tag, vector_filter_stats_shard(), sum(r.n) FROM (
        SELECT tenant_id, tags, 1 AS n FROM new_rows UNION ALL SELECT tenant_id, tags, -1 FROM old_rows) r
      CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT unnest(r.tags)) AS t(tag)
    GROUP BY 2, 4 HAVING sum(r.n) <> 0 ORDER BY 2, 4
    ON CONFLICT (table_name, tenant_id, scope, tag, shard) DO UPDATE SET rows = s.rows + excluded.rows;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
