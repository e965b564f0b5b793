-- A preempted workload tears down on its node although what it held passed
-- to its preemptor at once (issue 27): handed_over marks a teardown that
-- holds nothing, so the holding conditions beside tearing_down leave it
-- out. It is meaningful only while tearing_down, and cleared with it.
ALTER TABLE vms ADD COLUMN handed_over {{bool}} NOT NULL DEFAULT false;
