-- The kept pod counts: how many pods each (tenant, deleted or not, phase)
-- holds, so that a count the filters do not narrow further (podsCount, or
-- podsCount(filterBy: ["k8sPhase==X"])) sums a few rows instead of scanning
-- an index range of every such pod (store.CountPods).
--
-- Statement-level triggers append one row per key a statement changes,
-- with the change (+n, −n) in the same transaction as the pod writes, so a
-- reader's snapshot holds exactly the counts of the pods it sees. Rows are
-- only appended here, never updated, so concurrent writers take no lock on a
-- shared counter and cannot deadlock on one; CompactPodCounts folds each
-- key's rows into one, every few seconds, in one statement.
CREATE TABLE IF NOT EXISTS pod_counts (
  tenant_id  integer NOT NULL,
  is_deleted boolean NOT NULL,
  k8s_phase  text    NOT NULL,
  n          bigint  NOT NULL
);
CREATE INDEX IF NOT EXISTS pod_counts_key ON pod_counts (tenant_id, is_deleted, k8s_phase) INCLUDE (n);
-- No pod is written between the count below and the triggers' creation.
LOCK TABLE pods IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO pod_counts (tenant_id, is_deleted, k8s_phase, n)
  SELECT tenant_id, is_deleted, k8s_phase, count(*) FROM pods GROUP BY tenant_id, is_deleted, k8s_phase;
CREATE OR REPLACE FUNCTION pod_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO pod_counts (tenant_id, is_deleted, k8s_phase, n)
    SELECT tenant_id, is_deleted, k8s_phase, count(*) FROM new_rows GROUP BY tenant_id, is_deleted, k8s_phase; RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION pod_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO pod_counts (tenant_id, is_deleted, k8s_phase, n)
    SELECT tenant_id, is_deleted, k8s_phase, -count(*) FROM old_rows GROUP BY tenant_id, is_deleted, k8s_phase; RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION pod_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO pod_counts (tenant_id, is_deleted, k8s_phase, n)
    SELECT tenant_id, is_deleted, k8s_phase, sum(d) FROM (
      SELECT tenant_id, is_deleted, k8s_phase, 1 AS d FROM new_rows
      UNION ALL SELECT tenant_id, is_deleted, k8s_phase, -1 FROM old_rows) c
    GROUP BY tenant_id, is_deleted, k8s_phase HAVING sum(d) <> 0; RETURN NULL; END $$;
CREATE TRIGGER pod_counts_inserted AFTER INSERT ON pods REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION pod_counts_inserted();
CREATE TRIGGER pod_counts_deleted AFTER DELETE ON pods REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION pod_counts_deleted();
CREATE TRIGGER pod_counts_updated AFTER UPDATE ON pods REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION pod_counts_updated();
