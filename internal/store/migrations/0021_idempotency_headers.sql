-- The headers of a kept answer (Location, Warning, Content-Type, …), as
-- JSON, replayed with it. Answers kept before this have none ('').
ALTER TABLE idempotency_keys ADD COLUMN headers {{text}} NOT NULL DEFAULT '';
