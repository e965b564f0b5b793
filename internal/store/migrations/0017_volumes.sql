-- Volumes are objects (issue 27): a pod's /workspace and a VM's disk is a
-- row bound to the VM row it belongs to and the node that holds it. It is
-- kept across reboot, recreate and stop/start on that node; a row placed
-- on another node gets a new one (the old one marked deleted: the disk is
-- gone with its node), and deleted_at is also set when the row is
-- terminated. At most one live volume a row (the partial unique index).
-- fresh: it has never held data (no run on it reached running yet), which
-- the agent is told so it creates it empty.
CREATE TABLE IF NOT EXISTS volumes (
  id               {{text}} PRIMARY KEY,
  organization_id  {{text}} NOT NULL,
  vm_id            {{text}} NOT NULL,
  node_id          {{text}} NOT NULL,
  size_gb          integer  NOT NULL,
  fresh            {{bool}} NOT NULL DEFAULT true,
  created_at       {{time}} NOT NULL,
  deleted_at       {{time}}
);
CREATE UNIQUE INDEX IF NOT EXISTS volumes_live ON volumes (vm_id) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS volumes_vm_node ON volumes (vm_id, node_id, created_at);

-- Every row that holds a disk or volume on a node now gets its volume,
-- named as a first run's would be; a row whose node was removed has none
-- (the disk is gone).
INSERT INTO volumes (id, organization_id, vm_id, node_id, size_gb, fresh, created_at)
SELECT 'vol-' || id || '-' || generation, organization_id, id, node_id,
       CASE WHEN capability_tier = 'pod' THEN volume_gb ELSE disk_size_gb END,
       false, COALESCE(created_at, updated_at, CURRENT_TIMESTAMP)
FROM vms
WHERE node_id IS NOT NULL AND deleted_at IS NULL AND status NOT IN ('terminated', 'pending')
  AND status_reason <> 'node_removed'
  AND (CASE WHEN capability_tier = 'pod' THEN volume_gb ELSE disk_size_gb END) > 0;

-- The event log says what an event did besides the status: the
-- provisioningStage after it (agent-stage events change only that), and
-- for an event that started a run the volume it runs on and whether that
-- volume was made fresh by it.
ALTER TABLE vm_events ADD COLUMN provisioning_stage {{text}} NOT NULL DEFAULT '';
ALTER TABLE vm_events ADD COLUMN volume_id {{text}} NOT NULL DEFAULT '';
ALTER TABLE vm_events ADD COLUMN fresh_volume {{bool}} NOT NULL DEFAULT false;
