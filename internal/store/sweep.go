package store

import (
	"time"

	"gpugraph/models"
)

// The statements of the heartbeat sweep, run inside InTx transactions by
// package sweep, which decides from the lifecycle table what the
// heartbeats' absence and the operators' leavingAt do. Every write is
// conditional on the stored state the sweep locked, so any number of
// replicas may sweep one database at once. Lock order: node rows, by id,
// before the VM rows on them (ApplyToWorkloads), as a heartbeat's node
// lock comes before the rows it moves.

// LockSilentNodes locks, by id, the nodes in status whose last heartbeat
// is before before, and answers their ids. Nodes that never reported (no
// lastHeartbeatAt) are left out; so are, when withRowsIn is not empty,
// nodes on which no VM or pod is in one of those statuses.
func (s *Store) LockSilentNodes(tx *Txn, status models.NodeStatus, before time.Time, withRowsIn []models.VMStatus) ([]string, error) {
	q := tx.db.Table("nodes").Select("id").
		Where("status = ? AND last_heartbeat_at IS NOT NULL AND last_heartbeat_at < ?", status, before)
	if len(withRowsIn) > 0 {
		q = q.Where("EXISTS (SELECT 1 FROM vms WHERE vms.node_id = nodes.id AND vms.status IN ?)", withRowsIn)
	}
	var ids []string
	err := s.forUpdate(q.Order("id")).Scan(&ids).Error
	return ids, err
}

// SetNodesStatus writes status to the nodes ids, which the caller locked,
// and answers how many were not in it already.
func (s *Store) SetNodesStatus(tx *Txn, ids []string, status models.NodeStatus) (int64, error) {
	res := tx.db.Model(&models.Node{}).Where("id IN ? AND status <> ?", ids, status).Update("status", status)
	return res.RowsAffected, res.Error
}

// NodeState is a node's id and status.
type NodeState struct {
	ID     string
	Status models.NodeStatus
}

// LockNodesLeft locks and reads, by id, the nodes not removed yet whose
// leavingAt is at or before at.
func (s *Store) LockNodesLeft(tx *Txn, at time.Time) ([]NodeState, error) {
	var left []NodeState
	err := s.forUpdate(tx.db.Table("nodes").Select("id, status").
		Where("status <> ? AND leaving_at IS NOT NULL AND leaving_at <= ?", models.NodeRemoved, at).Order("id")).
		Scan(&left).Error
	return left, err
}

// NodesLeavingAfter reads, by id and without locks, the nodes not removed
// whose leavingAt is after at and on which a VM or pod is in one of
// statuses.
func (s *Store) NodesLeavingAfter(tx *Txn, at time.Time, statuses []models.VMStatus) ([]models.Node, error) {
	var ahead []models.Node
	err := tx.db.Where("status <> ? AND leaving_at IS NOT NULL AND leaving_at > ?", models.NodeRemoved, at).
		Where("EXISTS (SELECT 1 FROM vms WHERE vms.node_id = nodes.id AND vms.status IN ? AND vms.deleted_at IS NULL)", statuses).
		Order("id").Find(&ahead).Error
	return ahead, err
}
