-- A VM event's id as its organization sees it: seq counts that
-- organization's events alone (1, 2, 3, …), so gaps in what a subscriber
-- reads no longer show how busy other organizations are, as the log's
-- global id did. The events already kept keep their id as their seq, so
-- an after a client holds from before still resumes where it was; new
-- events take their organization's last seq + 1 (store.drawSeqs, under the
-- log's lock). The (organization_id, seq) index answers vmEvents and the
-- per-VM pages; it replaces vm_events_org, which ordered by the global id.
ALTER TABLE vm_events ADD COLUMN seq bigint NOT NULL DEFAULT 0;
UPDATE vm_events SET seq = id;
CREATE UNIQUE INDEX IF NOT EXISTS vm_events_org_seq ON vm_events (organization_id, seq);
DROP INDEX IF EXISTS vm_events_org;
