-- The scheduler's turn across organizations: the sequence number of each
-- organization's last queue placement, written in the transaction that
-- places it. A pass serves the organizations with pending rows least
-- recently served first (one never served before all), so the turn
-- rotates across passes and replicas alike: the database is the only
-- state. Priority orders an organization's own queue only.
CREATE TABLE IF NOT EXISTS queue_turns (
  organization_id  {{text}} PRIMARY KEY REFERENCES organizations(id),
  seq              bigint   NOT NULL
);

-- The next sequence number is the highest plus one: an index end, not a
-- scan of every organization's row.
CREATE INDEX IF NOT EXISTS queue_turns_seq ON queue_turns (seq);
