-- Columns the pods list reads; see 0005_pods_columns.postgres.sql for why.
-- SQLite can add a generated column only as VIRTUAL, which it indexes all
-- the same.
ALTER TABLE pods ADD COLUMN is_deleted boolean GENERATED ALWAYS AS (deleted_at IS NOT NULL) VIRTUAL;
ALTER TABLE pods ADD COLUMN search_text {{text}} NOT NULL DEFAULT '';
UPDATE pods SET search_text = lower(name) || char(31) || lower(coalesce(node_name, '')) || char(31) || lower(coalesce(workload_name, '')) || char(31) || lower(coalesce(project_name, ''));
