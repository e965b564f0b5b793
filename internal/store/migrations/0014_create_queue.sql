-- Creating VMs and pods (issue 26): a pending row keeps its queue priority
-- and the cluster and node pool its request stays within, and the
-- scheduler reads each organization's queue in its order (priority, then
-- arrival) from a partial index of the pending rows only.
ALTER TABLE vms ADD COLUMN priority integer NOT NULL DEFAULT 0;
ALTER TABLE vms ADD COLUMN want_cluster_id {{text}};
ALTER TABLE vms ADD COLUMN want_node_pool {{text}};
CREATE INDEX IF NOT EXISTS vms_pending_queue ON vms (organization_id, priority DESC, created_at, id) WHERE status = 'pending';
