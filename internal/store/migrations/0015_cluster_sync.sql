-- Cluster connectors (clustersync/): a cluster credential bound to one
-- cluster and one tenant, stored as a SHA-256 hash only, and the
-- cluster's ingestion state. The state outlives the credential (a revoked
-- cluster keeps its tenant and its pods); enrolling the cluster again
-- replaces the credential and starts its sequence afresh.
CREATE TABLE IF NOT EXISTS cluster_syncs (
  cluster_id      {{text}} PRIMARY KEY,
  tenant_id       integer  NOT NULL,
  secret_hash     {{text}} UNIQUE,
  created_by      {{text}} NOT NULL DEFAULT '',
  enrolled_at     {{time}},
  -- last_sequence is the greatest sequence applied; last_body_hash and
  -- last_answer are that batch's, so a replay answers the same.
  last_sequence   bigint   NOT NULL DEFAULT 0,
  last_body_hash  {{text}} NOT NULL DEFAULT '',
  last_answer     {{text}} NOT NULL DEFAULT '',
  -- batches counts the batches ever applied (never reset); a pod's
  -- sync_mark is the count of the last batch that named it, and
  -- snapshot_mark the count at which the snapshot in progress began (0:
  -- none), so a snapshot's end finds the pods it did not name.
  batches         bigint   NOT NULL DEFAULT 0,
  snapshot_mark   bigint   NOT NULL DEFAULT 0
);
ALTER TABLE pods ADD COLUMN sync_mark bigint NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS pods_cluster_sync ON pods (tenant_id, cluster_id, sync_mark) WHERE deleted_at IS NULL;
