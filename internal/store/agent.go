package store

import (
	"errors"
	"time"

	"gpugraph/models"
)

// The statements of the node agent's reports (docs/contract.md#agent), run
// inside one InTx transaction by package nodes, which decides between
// them from the report and the lifecycle table.
//
// # Lock order
//
// A report takes its locks in the order restart.go documents, so that it
// never deadlocks with a restart, a stop, the sweep or another report:
//
//  1. the VM rows a heartbeat may move, by id (LockRowsOnNamedNode),
//     before the node's row, since restart, stop and terminate lock a VM
//     row before its node's;
//  2. the node's row (LockNodeByName): two reports of one node, or a
//     report and the sweep, never interleave;
//  3. within that, VM rows are written before GPU rows, the order the
//     sweep's expiry takes too.

// LockNodeByName locks and reads the node named name; nil when there is
// none.
func (s *Store) LockNodeByName(tx *Txn, name string) (*models.Node, error) {
	var nodes []models.Node
	if err := s.forUpdate(tx.db).Where("name = ?", name).Limit(1).Find(&nodes).Error; err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	return &nodes[0], nil
}

// NodeIDTaken reports whether a node (of any name) has the id id.
func (s *Store) NodeIDTaken(tx *Txn, id string) (bool, error) {
	var taken int64
	if err := tx.db.Table("nodes").Where("id = ?", id).Count(&taken).Error; err != nil {
		return false, err
	}
	return taken > 0, nil
}

// CreateNode inserts n. A name or id another node has fails with a unique
// violation (IsUniqueViolation), which the caller replays.
func (s *Store) CreateNode(tx *Txn, n *models.Node) error {
	return tx.db.Create(n).Error
}

// NodeUpdate is what a report writes to its node's row. LastHeartbeatAt is
// always written; every other field is written only when it is not zero.
type NodeUpdate struct {
	LastHeartbeatAt         time.Time
	Status                  models.NodeStatus
	AgentVersion, ClusterID string
	CPUCores, RAMGb, DiskGb int
}

// UpdateNode writes u to node id, which the caller locked, in one
// statement.
func (s *Store) UpdateNode(tx *Txn, id string, u NodeUpdate) error {
	// Only a report writes here, so the node has an agent from now on.
	set := map[string]any{"last_heartbeat_at": u.LastHeartbeatAt, "agent_reported_at": u.LastHeartbeatAt}
	if u.Status != "" {
		set["status"] = u.Status
	}
	for col, v := range map[string]string{"agent_version": u.AgentVersion, "cluster_id": u.ClusterID} {
		if v != "" {
			set[col] = v
		}
	}
	for col, v := range map[string]int{"cpu_cores": u.CPUCores, "ram_gb": u.RAMGb, "disk_gb": u.DiskGb} {
		if v != 0 {
			set[col] = v
		}
	}
	return tx.db.Table("nodes").Where("id = ?", id).Updates(set).Error
}

// AdvanceReportSequence records seq as node nodeID's last report sequence
// when it is above the one recorded (advanced), and otherwise answers the
// recorded one, last, writing nothing.
func (s *Store) AdvanceReportSequence(tx *Txn, nodeID string, seq int64) (advanced bool, last int64, err error) {
	res := tx.db.Exec("UPDATE nodes SET report_sequence = ? WHERE id = ? AND report_sequence < ?", seq, nodeID, seq)
	if res.Error != nil {
		return false, 0, res.Error
	}
	if res.RowsAffected == 1 {
		return true, seq, nil
	}
	var recorded []int64
	if err := tx.db.Table("nodes").Where("id = ?", nodeID).Pluck("report_sequence", &recorded).Error; err != nil {
		return false, 0, err
	}
	if len(recorded) == 0 {
		return false, 0, errNoNode
	}
	return false, recorded[0], nil
}

// errNoNode says that a node a transaction locked is not there: a caller's
// bug, never a report's fault.
var errNoNode = errors.New("store: the node is not there")

// HeldShare is one VM or pod placed on a node, with the host share it
// holds there.
type HeldShare struct {
	ID             string
	CapabilityTier string
	CPUCores       int
	RAMGb          int
	DiskSizeGb     int
}

// HeldShares reads, by id, the VMs and pods on node nodeID in one of
// statuses or in a teardown that holds (tearingDownHolds: on a node an
// agent reports for, not handed over); other deleted rows are left out.
func (s *Store) HeldShares(tx *Txn, nodeID string, statuses []models.VMStatus) ([]HeldShare, error) {
	var held []HeldShare
	err := tx.db.Table("vms").Select("id, capability_tier, cpu_cores, ram_gb, disk_size_gb").
		Where("node_id = ? AND ((status IN ? AND deleted_at IS NULL) OR "+tearingDownHolds("vms")+")", nodeID, statuses).
		Order("id").Scan(&held).Error
	return held, err
}

// LockRowsOnNamedNode locks, by id, the VM rows on the node named nodeName
// whose id is one of ids, whose status is one of statuses with the
// statusReason reason, or that are tearing down there, and answers the ids
// of those tearing down. It reads nothing else: a heartbeat takes these
// locks before its node's (lock order) and reads the rows afterwards.
func (s *Store) LockRowsOnNamedNode(tx *Txn, nodeName string, ids []string, statuses []models.VMStatus, reason string) ([]string, error) {
	q := tx.db.Table("vms").Select("id, tearing_down").
		Where("node_id IN (SELECT id FROM nodes WHERE name = ?)", nodeName)
	if len(ids) > 0 {
		q = q.Where("id IN ? OR (status IN ? AND status_reason = ?) OR tearing_down", ids, statuses, reason)
	} else {
		q = q.Where("(status IN ? AND status_reason = ?) OR tearing_down", statuses, reason)
	}
	var locked []struct {
		ID          string
		TearingDown bool
	}
	if err := s.forUpdate(q.Order("id")).Scan(&locked).Error; err != nil {
		return nil, err
	}
	var down []string
	for _, r := range locked {
		if r.TearingDown {
			down = append(down, r.ID)
		}
	}
	return down, nil
}

// LockVMsOnNode locks and reads, by id, the rows with these ids that are
// on node nodeID; deleted rows are left out unless they are still tearing
// down there, and so are rows elsewhere.
func (s *Store) LockVMsOnNode(tx *Txn, nodeID string, ids []string) ([]*models.VM, error) {
	vms := []*models.VM{}
	err := s.forUpdate(tx.db.Where("node_id = ? AND id IN ? AND (deleted_at IS NULL OR tearing_down)", nodeID, ids)).
		Order("id").Find(&vms).Error
	return vms, err
}

// AppendNodeEvents writes a transaction's node events at its tail (see
// appendNodeEvents); none is nothing.
func (s *Store) AppendNodeEvents(tx *Txn, evs []*models.NodeEvent) error {
	return s.appendNodeEvents(tx.db, evs)
}
