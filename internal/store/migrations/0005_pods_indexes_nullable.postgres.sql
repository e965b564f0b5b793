-- List indexes for the nullable sort keys on PostgreSQL, which puts nulls
-- last in ascending order and first in descending order by itself: the
-- order is "col, id" (filterby.Sort.PostgresOrderBy), so the bare column
-- serves it, and an equality or prefix filter on it bounds the range.
CREATE INDEX IF NOT EXISTS pods_list_revision_id ON pods (tenant_id, is_deleted, revision_id, id);
CREATE INDEX IF NOT EXISTS pods_list_node_name ON pods (tenant_id, is_deleted, node_name, id);
CREATE INDEX IF NOT EXISTS pods_list_current_node_pool ON pods (tenant_id, is_deleted, current_node_pool, id);
CREATE INDEX IF NOT EXISTS pods_list_completed_at ON pods (tenant_id, is_deleted, completed_at, id);
CREATE INDEX IF NOT EXISTS pods_list_deleted_at ON pods (tenant_id, is_deleted, deleted_at, id);
