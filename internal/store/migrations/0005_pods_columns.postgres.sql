-- Columns the pods list reads (resolvers/pods.go, store/pods.go).
--
-- is_deleted mirrors "deleted_at is set" as a column of its own so that the
-- list indexes (0005_pods_indexes.sql) can lead with it: a condition on
-- "deleted_at IS NULL" cannot use an index column, and the expression form
-- gets rewritten by the planner. GENERATED keeps it true without any writer
-- knowing about it.
ALTER TABLE pods ADD COLUMN IF NOT EXISTS is_deleted boolean GENERATED ALWAYS AS (deleted_at IS NOT NULL) STORED;

-- search_text is the case-folded search key, kept by models.Pod.BeforeSave
-- (see models/podsearch.go). Rows written before this migration get an
-- ASCII-folded key here; loading them again gives the exact one.
ALTER TABLE pods ADD COLUMN IF NOT EXISTS search_text {{text}} NOT NULL DEFAULT '';
UPDATE pods SET search_text = lower(name) || chr(31) || lower(coalesce(node_name, '')) || chr(31) || lower(coalesce(workload_name, '')) || chr(31) || lower(coalesce(project_name, ''));
