-- The index of 0004 on a node's last heartbeat is written on every
-- heartbeat; the sweep reads the online nodes instead (see the PostgreSQL
-- file of this migration).
DROP INDEX IF EXISTS nodes_status_heartbeat;
