-- The VM and pod lifecycle (models/lifecycle.go): the event log every
-- transition appends to, what the agent and the sweep need to move a row,
-- organization states, and idempotent POST/DELETE of /v1/vms.

CREATE TABLE IF NOT EXISTS vm_events (
  id               {{serial}},
  vm_id            {{text}} NOT NULL,
  organization_id  {{text}} NOT NULL,
  from_status      {{text}} NOT NULL,
  to_status        {{text}} NOT NULL,
  reason           {{text}} NOT NULL DEFAULT '',
  transition       {{text}} NOT NULL,
  actor_kind       {{text}} NOT NULL,
  actor_id         {{text}} NOT NULL DEFAULT '',
  at               {{time}} NOT NULL
);
CREATE INDEX IF NOT EXISTS vm_events_vm ON vm_events (vm_id, id);
CREATE INDEX IF NOT EXISTS vm_events_org ON vm_events (organization_id, id);

-- generation counts the runs of a row: it grows when the row enters
-- deploying, so an agent's report of an older run is told apart.
ALTER TABLE vms ADD COLUMN generation integer NOT NULL DEFAULT 0;
-- status_changed_at is when the row entered its status (provision timeout).
ALTER TABLE vms ADD COLUMN status_changed_at {{time}};
-- deleted_at hides a row from the API (a pod interrupted for 7 days).
ALTER TABLE vms ADD COLUMN deleted_at {{time}};

-- active, suspended, balance_exhausted or deleted.
ALTER TABLE organizations ADD COLUMN state {{text}} NOT NULL DEFAULT 'active';

CREATE TABLE IF NOT EXISTS idempotency_keys (
  organization_id  {{text}} NOT NULL,
  idem_key         {{text}} NOT NULL,
  request_hash     {{text}} NOT NULL,
  status           integer  NOT NULL,
  body             {{text}} NOT NULL,
  created_at       {{time}} NOT NULL,
  PRIMARY KEY (organization_id, idem_key)
);
