-- List indexes for the nullable sort keys on SQLite, which sorts nulls
-- first: the order is "(col IS NULL), col, id" (filterby.Sort.OrderBy), and
-- the index holds the same expression.
CREATE INDEX IF NOT EXISTS pods_list_revision_id ON pods (tenant_id, is_deleted, (revision_id IS NULL), revision_id, id);
CREATE INDEX IF NOT EXISTS pods_list_node_name ON pods (tenant_id, is_deleted, (node_name IS NULL), node_name, id);
CREATE INDEX IF NOT EXISTS pods_list_current_node_pool ON pods (tenant_id, is_deleted, (current_node_pool IS NULL), current_node_pool, id);
CREATE INDEX IF NOT EXISTS pods_list_completed_at ON pods (tenant_id, is_deleted, (completed_at IS NULL), completed_at, id);
CREATE INDEX IF NOT EXISTS pods_list_deleted_at ON pods (tenant_id, is_deleted, (deleted_at IS NULL), deleted_at, id);
