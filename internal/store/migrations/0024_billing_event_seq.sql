-- A billing event's id as its organization sees it (seq: its own billing
-- events counted, 1, 2, 3 …), as a VM event's (0011), so the ids a tenant
-- reads on GET /v1/billing/events and billingEvents show nothing of how
-- many events the other organizations had. Drawn under the event log's
-- lock (the greatest of the organization's plus one); the events kept
-- before are numbered in id order.
ALTER TABLE billing_events ADD COLUMN seq bigint NOT NULL DEFAULT 0;
UPDATE billing_events SET seq = (SELECT COUNT(*) FROM billing_events b
  WHERE b.organization_id = billing_events.organization_id AND b.id <= billing_events.id);
CREATE UNIQUE INDEX IF NOT EXISTS billing_events_org_seq ON billing_events (organization_id, seq);
