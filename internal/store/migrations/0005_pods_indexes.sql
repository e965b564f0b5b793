-- Indexes of the Run:ai pods list (docs/contract.md#pods). Every list reads one tenant's
-- pods, deleted or not, in one of ten orders, a page at a time:
--   WHERE tenant_id = ? AND is_deleted = ? [AND filters] ORDER BY <key>, id
-- One index per sort key, led by (tenant_id, is_deleted), walks a page in
-- order and stops after offset + limit matches, and lets the count read the
-- index only; a descending list walks the same index backwards. The keys
-- follow filterby.Sort: a NOT NULL column sorts bare on both engines
-- (here); a nullable one differs by engine (0005_pods_indexes_nullable.*).
DROP INDEX IF EXISTS pods_tenant_created;
CREATE INDEX IF NOT EXISTS pods_list_created_at ON pods (tenant_id, is_deleted, created_at, id);
CREATE INDEX IF NOT EXISTS pods_list_name ON pods (tenant_id, is_deleted, name, id);
CREATE INDEX IF NOT EXISTS pods_list_cluster_id ON pods (tenant_id, is_deleted, cluster_id, id);
CREATE INDEX IF NOT EXISTS pods_list_workload_id ON pods (tenant_id, is_deleted, workload_id, id);
CREATE INDEX IF NOT EXISTS pods_list_k8s_phase ON pods (tenant_id, is_deleted, k8s_phase, id);

-- One workload's or one revision's pods: few enough to sort in memory once
-- found; these replace the single-column indexes of 0001 (they serve the
-- foreign keys as well).
DROP INDEX IF EXISTS pods_workload;
DROP INDEX IF EXISTS pods_revision;
CREATE INDEX IF NOT EXISTS pods_workload_list ON pods (workload_id, is_deleted, created_at, id);
CREATE INDEX IF NOT EXISTS pods_revision_list ON pods (revision_id, is_deleted, created_at, id);
