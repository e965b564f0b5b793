-- A heartbeat writes a node's last_heartbeat_at, which 0004 indexed for
-- the sweep: every heartbeat was then a new row version with a new entry
-- in each of the node's five indexes. Without it, and with room left on
-- each page, PostgreSQL updates the row in place of its page (a HOT
-- update: no index touched). The sweep reads the online nodes instead,
-- every few seconds on each replica (20,000 nodes: a few milliseconds).
DROP INDEX IF EXISTS nodes_status_heartbeat;
ALTER TABLE nodes SET (fillfactor = 80);
ALTER TABLE gpus SET (fillfactor = 80);
