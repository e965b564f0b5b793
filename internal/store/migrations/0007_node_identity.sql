-- Node identity for agents (nodeid/): an operator enrolls a node name and
-- gets a one-time bootstrap token; the agent exchanges it for a node
-- credential bound to that name and cluster. Both secrets are stored as
-- SHA-256 hashes only, as API keys are.

CREATE TABLE IF NOT EXISTS node_enrollments (
  token_hash   {{text}} PRIMARY KEY,
  node_name    {{text}} NOT NULL,
  cluster_id   {{text}} NOT NULL,
  created_by   {{text}} NOT NULL,
  created_at   {{time}} NOT NULL,
  expires_at   {{time}} NOT NULL,
  used_at      {{time}}
);
CREATE INDEX IF NOT EXISTS node_enrollments_node ON node_enrollments (node_name);

-- One credential per node name: exchanging a new bootstrap token replaces
-- the node's credential (rotation, or a re-imaged node).
CREATE TABLE IF NOT EXISTS node_credentials (
  node_name    {{text}} PRIMARY KEY,
  cluster_id   {{text}} NOT NULL,
  secret_hash  {{text}} NOT NULL UNIQUE,
  created_at   {{time}} NOT NULL
);

-- report_sequence is the greatest sequence the node's reports carried so
-- far; a report with a sequence not above it is stale (a replay).
ALTER TABLE nodes ADD COLUMN report_sequence bigint NOT NULL DEFAULT 0;
