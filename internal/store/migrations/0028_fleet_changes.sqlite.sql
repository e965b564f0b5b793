-- The nodes whose placement view changed, in commit order (see the
-- PostgreSQL file of this migration): row triggers append the node of
-- every write a placement reads, in the same transaction. SQLite has one
-- writer at a time, so the rows' own increasing numbers are the commit
-- order; AUTOINCREMENT never hands a number out twice, even after the pruning
-- deleted the last rows.
CREATE TABLE IF NOT EXISTS fleet_changes (
  seq     INTEGER PRIMARY KEY AUTOINCREMENT,
  node_id TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS fleet_node_inserted AFTER INSERT ON nodes BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (NEW.id); END;
-- A heartbeat changes none of these (its agent_reported_at counts only
-- once, when it is first set: whether a teardown there holds anything).
CREATE TRIGGER IF NOT EXISTS fleet_node_updated
  AFTER UPDATE OF name, cluster_id, node_pool, status, agent_version, fabric_id, cpu_cores, ram_gb, disk_gb, leaving_at, agent_reported_at ON nodes
  WHEN OLD.name IS NOT NEW.name OR OLD.cluster_id IS NOT NEW.cluster_id OR OLD.node_pool IS NOT NEW.node_pool OR OLD.status IS NOT NEW.status
    OR OLD.agent_version IS NOT NEW.agent_version OR OLD.fabric_id IS NOT NEW.fabric_id OR OLD.cpu_cores IS NOT NEW.cpu_cores
    OR OLD.ram_gb IS NOT NEW.ram_gb OR OLD.disk_gb IS NOT NEW.disk_gb OR OLD.leaving_at IS NOT NEW.leaving_at
    OR (OLD.agent_reported_at IS NULL) IS NOT (NEW.agent_reported_at IS NULL) BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (NEW.id); END;
CREATE TRIGGER IF NOT EXISTS fleet_node_deleted AFTER DELETE ON nodes BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (OLD.id); END;
CREATE TRIGGER IF NOT EXISTS fleet_gpu_inserted AFTER INSERT ON gpus BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (NEW.node_id); END;
-- A heartbeat's readings (utilization, memory) fire nothing.
CREATE TRIGGER IF NOT EXISTS fleet_gpu_updated
  AFTER UPDATE OF node_id, idx, address, model_id, health, failed_reason, holder_vm_id ON gpus
  WHEN OLD.node_id IS NOT NEW.node_id OR OLD.idx IS NOT NEW.idx OR OLD.address IS NOT NEW.address OR OLD.model_id IS NOT NEW.model_id
    OR OLD.health IS NOT NEW.health OR OLD.failed_reason IS NOT NEW.failed_reason OR OLD.holder_vm_id IS NOT NEW.holder_vm_id BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (NEW.node_id); INSERT INTO fleet_changes (node_id) SELECT OLD.node_id WHERE OLD.node_id IS NOT NEW.node_id; END;
CREATE TRIGGER IF NOT EXISTS fleet_gpu_deleted AFTER DELETE ON gpus BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (OLD.node_id); END;
-- A VM's host share (a plain VM's CPU, RAM and disk while it holds them).
CREATE TRIGGER IF NOT EXISTS fleet_vm_inserted AFTER INSERT ON vms WHEN NEW.node_id IS NOT NULL BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (NEW.node_id); END;
CREATE TRIGGER IF NOT EXISTS fleet_vm_updated
  AFTER UPDATE OF node_id, status, tearing_down, handed_over, capability_tier, cpu_cores, ram_gb, disk_size_gb ON vms
  WHEN (OLD.node_id IS NOT NULL OR NEW.node_id IS NOT NULL) AND (OLD.node_id IS NOT NEW.node_id OR OLD.status IS NOT NEW.status
    OR OLD.tearing_down IS NOT NEW.tearing_down OR OLD.handed_over IS NOT NEW.handed_over OR OLD.capability_tier IS NOT NEW.capability_tier
    OR OLD.cpu_cores IS NOT NEW.cpu_cores OR OLD.ram_gb IS NOT NEW.ram_gb OR OLD.disk_size_gb IS NOT NEW.disk_size_gb) BEGIN
  INSERT INTO fleet_changes (node_id) SELECT NEW.node_id WHERE NEW.node_id IS NOT NULL; INSERT INTO fleet_changes (node_id) SELECT OLD.node_id WHERE OLD.node_id IS NOT NULL AND OLD.node_id IS NOT NEW.node_id; END;
CREATE TRIGGER IF NOT EXISTS fleet_vm_deleted AFTER DELETE ON vms WHEN OLD.node_id IS NOT NULL BEGIN
  INSERT INTO fleet_changes (node_id) VALUES (OLD.node_id); END;
