-- The nodes whose placement view changed, and when (in commit order), so
-- that each replica keeps its own copy of the fleet's view and reads again
-- only the nodes that changed since it last looked (store.ReadFleet): a
-- create that queues counts every node under its reason ("0/N nodes can
-- take it") from that copy instead of reading every node and GPU.
--
-- Triggers append a row (the writing transaction's id, the node) in the
-- same transaction as every write a placement reads: a node's own columns,
-- its GPUs, and the VMs whose host share or GPUs it holds. Rows are only
-- appended, so concurrent writers take no shared lock and cannot deadlock
-- on one; a transaction's several rows of one node are one (ON CONFLICT).
-- A reader reads, in one snapshot, the rows of every transaction its last
-- snapshot could not see: those at or after that snapshot's xmin (a
-- transaction's id is assigned before it writes, so one still running then
-- has an id at or past it). compute.ChangePruning deletes the rows every reader has
-- passed (store.DeleteFleetChangesBefore).
CREATE TABLE IF NOT EXISTS fleet_changes (
  xid     xid8 NOT NULL DEFAULT pg_current_xact_id(),
  node_id text NOT NULL,
  PRIMARY KEY (xid, node_id)
);
CREATE OR REPLACE FUNCTION fleet_nodes_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO fleet_changes (node_id) SELECT DISTINCT id FROM new_rows ON CONFLICT DO NOTHING; RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION fleet_nodes_deleted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO fleet_changes (node_id) SELECT DISTINCT id FROM old_rows ON CONFLICT DO NOTHING; RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION fleet_rows_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO fleet_changes (node_id) SELECT DISTINCT node_id FROM new_rows WHERE node_id IS NOT NULL ON CONFLICT DO NOTHING; RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION fleet_rows_deleted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO fleet_changes (node_id) SELECT DISTINCT node_id FROM old_rows WHERE node_id IS NOT NULL ON CONFLICT DO NOTHING; RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION fleet_row_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (NEW.node_id) ON CONFLICT DO NOTHING; RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION fleet_node_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (NEW.id) ON CONFLICT DO NOTHING; RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION fleet_row_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO fleet_changes (node_id) SELECT DISTINCT n FROM (VALUES (OLD.node_id), (NEW.node_id)) v (n) WHERE n IS NOT NULL
    ON CONFLICT DO NOTHING; RETURN NULL; END $$;
CREATE TRIGGER fleet_nodes_inserted AFTER INSERT ON nodes REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fleet_nodes_inserted();
-- A heartbeat changes none of these (its agent_reported_at counts only
-- once, when it is first set: whether a teardown there holds anything).
CREATE TRIGGER fleet_node_updated
  AFTER UPDATE OF name, cluster_id, node_pool, status, agent_version, fabric_id, cpu_cores, ram_gb, disk_gb, leaving_at, agent_reported_at ON nodes
  FOR EACH ROW WHEN ((OLD.name, OLD.cluster_id, OLD.node_pool, OLD.status, OLD.agent_version, OLD.fabric_id, OLD.cpu_cores, OLD.ram_gb, OLD.disk_gb, OLD.leaving_at, OLD.agent_reported_at IS NULL)
    IS DISTINCT FROM (NEW.name, NEW.cluster_id, NEW.node_pool, NEW.status, NEW.agent_version, NEW.fabric_id, NEW.cpu_cores, NEW.ram_gb, NEW.disk_gb, NEW.leaving_at, NEW.agent_reported_at IS NULL))
  EXECUTE FUNCTION fleet_node_updated();
CREATE TRIGGER fleet_nodes_deleted AFTER DELETE ON nodes REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fleet_nodes_deleted();
CREATE TRIGGER fleet_gpus_inserted AFTER INSERT ON gpus REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fleet_rows_inserted();
-- A heartbeat's readings (utilization, memory) fire nothing.
CREATE TRIGGER fleet_gpu_updated
  AFTER UPDATE OF node_id, idx, address, model_id, health, failed_reason, holder_vm_id ON gpus
  FOR EACH ROW WHEN ((OLD.node_id, OLD.idx, OLD.address, OLD.model_id, OLD.health, OLD.failed_reason, OLD.holder_vm_id)
    IS DISTINCT FROM (NEW.node_id, NEW.idx, NEW.address, NEW.model_id, NEW.health, NEW.failed_reason, NEW.holder_vm_id))
  EXECUTE FUNCTION fleet_row_updated();
CREATE TRIGGER fleet_gpus_deleted AFTER DELETE ON gpus REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fleet_rows_deleted();
-- A VM's host share (a plain VM's CPU, RAM and disk while it holds them).
-- A create inserts its row with no node: a row trigger's condition skips
-- it without a call.
CREATE TRIGGER fleet_vm_inserted AFTER INSERT ON vms
  FOR EACH ROW WHEN (NEW.node_id IS NOT NULL) EXECUTE FUNCTION fleet_row_inserted();
CREATE TRIGGER fleet_vm_updated
  AFTER UPDATE OF node_id, status, tearing_down, handed_over, capability_tier, cpu_cores, ram_gb, disk_size_gb ON vms
  FOR EACH ROW WHEN ((OLD.node_id IS NOT NULL OR NEW.node_id IS NOT NULL) AND
    (OLD.node_id, OLD.status, OLD.tearing_down, OLD.handed_over, OLD.capability_tier, OLD.cpu_cores, OLD.ram_gb, OLD.disk_size_gb)
    IS DISTINCT FROM (NEW.node_id, NEW.status, NEW.tearing_down, NEW.handed_over, NEW.capability_tier, NEW.cpu_cores, NEW.ram_gb, NEW.disk_size_gb))
  EXECUTE FUNCTION fleet_row_updated();
CREATE TRIGGER fleet_vms_deleted AFTER DELETE ON vms REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fleet_rows_deleted();
