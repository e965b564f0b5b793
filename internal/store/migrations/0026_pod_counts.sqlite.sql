-- The kept pod counts: how many pods each (tenant, deleted or not, phase)
-- holds, so that a count the filters do not narrow further (podsCount, or
-- podsCount(filterBy: ["k8sPhase==X"])) reads one row instead of scanning
-- an index range of every such pod (store.CountPods). SQLite has one
-- writer at a time, so one row a key, kept by row triggers in the same
-- transaction as the pod write (the PostgreSQL file appends rows instead).
-- is_deleted is written as pods' generated column computes it. A key's row
-- is made with INSERT … WHERE NOT EXISTS, not INSERT OR IGNORE: an outer
-- upsert's conflict policy would override the trigger's.
CREATE TABLE IF NOT EXISTS pod_counts (
  tenant_id  integer NOT NULL,
  is_deleted boolean NOT NULL,
  k8s_phase  text    NOT NULL,
  n          integer NOT NULL,
  PRIMARY KEY (tenant_id, is_deleted, k8s_phase)
);
INSERT INTO pod_counts (tenant_id, is_deleted, k8s_phase, n)
  SELECT tenant_id, deleted_at IS NOT NULL, k8s_phase, count(*) FROM pods GROUP BY tenant_id, deleted_at IS NOT NULL, k8s_phase;
CREATE TRIGGER IF NOT EXISTS pod_counts_inserted AFTER INSERT ON pods BEGIN
  INSERT INTO pod_counts (tenant_id, is_deleted, k8s_phase, n) SELECT NEW.tenant_id, NEW.deleted_at IS NOT NULL, NEW.k8s_phase, 0 WHERE NOT EXISTS (SELECT 1 FROM pod_counts WHERE tenant_id = NEW.tenant_id AND is_deleted = (NEW.deleted_at IS NOT NULL) AND k8s_phase = NEW.k8s_phase); UPDATE pod_counts SET n = n + 1 WHERE tenant_id = NEW.tenant_id AND is_deleted = (NEW.deleted_at IS NOT NULL) AND k8s_phase = NEW.k8s_phase; END;
CREATE TRIGGER IF NOT EXISTS pod_counts_deleted AFTER DELETE ON pods BEGIN
  UPDATE pod_counts SET n = n - 1 WHERE tenant_id = OLD.tenant_id AND is_deleted = (OLD.deleted_at IS NOT NULL) AND k8s_phase = OLD.k8s_phase; END;
CREATE TRIGGER IF NOT EXISTS pod_counts_updated AFTER UPDATE OF tenant_id, deleted_at, k8s_phase ON pods
  WHEN OLD.tenant_id IS NOT NEW.tenant_id OR (OLD.deleted_at IS NULL) IS NOT (NEW.deleted_at IS NULL) OR OLD.k8s_phase IS NOT NEW.k8s_phase BEGIN
  UPDATE pod_counts SET n = n - 1 WHERE tenant_id = OLD.tenant_id AND is_deleted = (OLD.deleted_at IS NOT NULL) AND k8s_phase = OLD.k8s_phase; INSERT INTO pod_counts (tenant_id, is_deleted, k8s_phase, n) SELECT NEW.tenant_id, NEW.deleted_at IS NOT NULL, NEW.k8s_phase, 0 WHERE NOT EXISTS (SELECT 1 FROM pod_counts WHERE tenant_id = NEW.tenant_id AND is_deleted = (NEW.deleted_at IS NOT NULL) AND k8s_phase = NEW.k8s_phase); UPDATE pod_counts SET n = n + 1 WHERE tenant_id = NEW.tenant_id AND is_deleted = (NEW.deleted_at IS NOT NULL) AND k8s_phase = NEW.k8s_phase; END;
