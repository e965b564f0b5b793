-- The node event log (models.NodeEvent): node status, leavingAt and GPU
-- health changes, appended in the transactions that make them, for the
-- nodeEvents subscription. Shaped as vm_events: ids grow in commit order
-- (store.lockEventLog), so a subscriber resumes from its last id.

CREATE TABLE IF NOT EXISTS node_events (
  id               {{serial}},
  node_id          {{text}} NOT NULL,
  kind             {{text}} NOT NULL,
  from_status      {{text}},
  to_status        {{text}},
  from_leaving_at  {{time}},
  to_leaving_at    {{time}},
  gpu_id           {{text}},
  from_health      {{text}},
  to_health        {{text}},
  failed_reason    {{text}},
  actor_kind       {{text}} NOT NULL,
  actor_id         {{text}} NOT NULL DEFAULT '',
  at               {{time}} NOT NULL
);
CREATE INDEX IF NOT EXISTS node_events_node ON node_events (node_id, id);
CREATE INDEX IF NOT EXISTS node_events_at ON node_events (at);
