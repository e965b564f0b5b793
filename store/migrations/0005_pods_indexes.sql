-- Indexes of the Run:ai pods list (SPEC §6). Every list reads one tenant's
-- pods, deleted or not, in one of ten orders, a page at a time:
--   WHERE tenant_id = ? AND is_deleted = ? [AND filters] ORDER BY <key>, id
-- One index per sort key, led by (tenant_id, is_deleted), walks a page in
-- order and stops after offset + limit matches, and lets the count read the
-- index only. The order keys are exactly filterby.Sort.OrderBy(): a bare
-- column for NOT NULL ones, "(col IS NULL), col" for nullable ones (nulls
-- last on both engines); a descending list walks the same index backwards.
DROP INDEX IF EXISTS pods_tenant_created;
CREATE INDEX IF NOT EXISTS pods_list_created_at ON pods (tenant_id, is_deleted, created_at, id);
CREATE INDEX IF NOT EXISTS pods_list_name ON pods (tenant_id, is_deleted, name, id);
CREATE INDEX IF NOT EXISTS pods_list_cluster_id ON pods (tenant_id, is_deleted, cluster_id, id);
CREATE INDEX IF NOT EXISTS pods_list_workload_id ON pods (tenant_id, is_deleted, workload_id, id);
CREATE INDEX IF NOT EXISTS pods_list_k8s_phase ON pods (tenant_id, is_deleted, k8s_phase, id);
CREATE INDEX IF NOT EXISTS pods_list_revision_id ON pods (tenant_id, is_deleted, (revision_id IS NULL), revision_id, id);
CREATE INDEX IF NOT EXISTS pods_list_node_name ON pods (tenant_id, is_deleted, (node_name IS NULL), node_name, id);
CREATE INDEX IF NOT EXISTS pods_list_current_node_pool ON pods (tenant_id, is_deleted, (current_node_pool IS NULL), current_node_pool, id);
CREATE INDEX IF NOT EXISTS pods_list_completed_at ON pods (tenant_id, is_deleted, (completed_at IS NULL), completed_at, id);
CREATE INDEX IF NOT EXISTS pods_list_deleted_at ON pods (tenant_id, is_deleted, (deleted_at IS NULL), deleted_at, id);

-- One workload's or one revision's pods: few enough to sort in memory once
-- found; these replace the single-column indexes of 0001 (they serve the
-- foreign keys as well).
DROP INDEX IF EXISTS pods_workload;
DROP INDEX IF EXISTS pods_revision;
CREATE INDEX IF NOT EXISTS pods_workload_list ON pods (workload_id, is_deleted, created_at, id);
CREATE INDEX IF NOT EXISTS pods_revision_list ON pods (revision_id, is_deleted, created_at, id);
