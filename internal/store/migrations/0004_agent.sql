-- The heartbeat sweep finds silent reporting nodes by status and last
-- heartbeat on every tick of every replica.
CREATE INDEX IF NOT EXISTS nodes_status_heartbeat ON nodes (status, last_heartbeat_at);
