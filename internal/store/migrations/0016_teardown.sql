-- Generations, actions and teardown reach the node (issue 27). A row keeps
-- the action its current generation asks of the node agent (run, reboot,
-- recreate); a node records when an agent first reported for it, since
-- only such a node has anything to tear down; an event keeps the row's
-- generation after it, so an agent's acknowledgement names the one it ran;
-- and the sweep finds the rows still tearing down from a partial index.
ALTER TABLE vms ADD COLUMN action {{text}} NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN agent_reported_at {{time}};
ALTER TABLE vm_events ADD COLUMN generation integer;
CREATE INDEX IF NOT EXISTS vms_tearing_down ON vms (node_id) WHERE tearing_down;
