package store

import (
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// What a teardown holds (see Apply): a row tearing down on a node an agent
// reports for holds its GPUs (they stay its gpus.holder_vm_id), and its host
// share and InfiniBand address, which are derived from the VM rows, as a
// row in a holding status does. A fixture's tearingDown on a node no agent
// ever reported for holds nothing, and nor does a handed-over one (a
// preempted row, whose preemptor took what it held).

// tearingDownHolds is the condition on the vms row aliased t of a
// teardown that holds what the row was given: one on an agent's node that
// was not handed over.
func tearingDownHolds(t string) string {
	return "(" + t + ".tearing_down AND NOT " + t + ".handed_over AND " +
		t + ".node_id IN (SELECT id FROM nodes WHERE agent_reported_at IS NOT NULL))"
}

// holding is the condition on the vms row aliased t of a row that holds
// what it was given: a holding status (the one parameter), or a teardown
// that holds.
func holding(t string) string { return "(" + t + ".status IN ? OR " + tearingDownHolds(t) + ")" }

// holdingVMs and holdingV are holding for vms unaliased and aliased v.
var holdingVMs, holdingV = holding("vms"), holding("v")

// hostShareHolders is the plain VMs that hold a host share on their node
// (a pod's host share is the platform's): what the snapshot lists and
// the create's candidates sum, one definition so the two agree.
func hostShareHolders(db *gorm.DB) *gorm.DB {
	return db.Model(&models.VM{}).
		Where(holdingVMs+" AND capability_tier <> ? AND node_id IS NOT NULL", models.HoldingStatuses, models.TierPod)
}

// LockExpiredTeardowns locks, by id, the nodes that are not online and
// that sent no report since before, on which a row is tearing down, and
// then those rows, by id (lock order: nodes before the VM rows on them, as
// the rest of the sweep); it answers the rows, at most limit.
func (s *Store) LockExpiredTeardowns(tx *Txn, before time.Time, limit int) (LockedRows, error) {
	var nodeIDs []string
	err := s.forUpdate(tx.db.Table("nodes").Select("id").
		Where("status <> ? AND COALESCE(last_heartbeat_at, agent_reported_at) < ?", models.NodeOnline, before).
		Where("EXISTS (SELECT 1 FROM vms WHERE vms.node_id = nodes.id AND vms.tearing_down)").Order("id")).
		Find(&nodeIDs).Error
	if err != nil || len(nodeIDs) == 0 {
		return LockedRows{}, err
	}
	// Deleted rows are read too: an expired pod tears down after it left
	// the API.
	rows, err := s.lockRows(tx.db.Where("tearing_down AND node_id IN ?", nodeIDs).Limit(limit))
	return LockedRows{rows: rows}, err
}
