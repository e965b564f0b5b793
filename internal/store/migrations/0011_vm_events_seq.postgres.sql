-- A VM event's id as its organization sees it: seq counts that
-- organization's events alone (1, 2, 3 …), so gaps in what a subscriber
-- reads no longer show how busy other organizations are, as the log's
-- global id did. vm_event_seqs holds each organization's last seq, drawn
-- from under the log's lock (store.drawSeqs), so seqs keep growing when
-- retention empties an organization's log, as the global id did. The
-- events already kept keep their id as their seq, and every organization's
-- counter starts at the log's last id ever drawn, so an after a client
-- holds from before still resumes where it was. The (organization_id, seq)
-- index answers vmEvents and the per-VM pages; it replaces vm_events_org,
-- which ordered by the global id.
ALTER TABLE vm_events ADD COLUMN seq bigint NOT NULL DEFAULT 0;
UPDATE vm_events SET seq = id;
CREATE UNIQUE INDEX IF NOT EXISTS vm_events_org_seq ON vm_events (organization_id, seq);
DROP INDEX IF EXISTS vm_events_org;
CREATE TABLE IF NOT EXISTS vm_event_seqs (
  organization_id  text COLLATE "C" PRIMARY KEY,
  last             bigint NOT NULL
);
INSERT INTO vm_event_seqs (organization_id, last)
  SELECT id, GREATEST(COALESCE(pg_sequence_last_value(pg_get_serial_sequence('vm_events', 'id')::regclass), 0),
                      COALESCE((SELECT MAX(id) FROM vm_events), 0))
  FROM organizations
  ON CONFLICT (organization_id) DO NOTHING;
