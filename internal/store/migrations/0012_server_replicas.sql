-- Each running server process announces itself here every few seconds
-- (replicas.Heartbeat) and deletes its row at a clean shutdown; a process
-- counts the rows seen within a few beats to hold its share of the
-- deployment's rate limits. A process killed without shutting down leaves
-- a row that stops counting once it is stale and is deleted later.
CREATE TABLE IF NOT EXISTS server_replicas (
  id       {{text}} PRIMARY KEY,
  seen_at  {{time}} NOT NULL
);
