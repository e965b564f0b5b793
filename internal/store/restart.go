package store

import (
	"errors"
	"log/slog"

	"gorm.io/gorm"

	"gpugraph/models"
)

// The statements of a restart, run inside one InTx transaction by package
// compute, which decides between them.
//
// # Lock order
//
// Every restart takes its locks in one order, so restarts never deadlock
// one another:
//
//  1. the VM row (LockVM);
//  2. the organization's GPU quota row for the VM's model (LockGPUQuota),
//     when a stopped or failed VM starts again and the quota exists; a
//     placement with no VM row to lock yet (a create) starts here;
//  3. node rows, by id (LockNode, LockNodes);
//  4. fabric rows, by id (Snapshot with LockFabrics);
//  5. a queue placement's organization turn row (ServedFromQueue), last.
//
// A create that found no room and would queue takes its organization's
// queue lock (CountQueued) after 2, holding no node (those it gave up were
// let go).
//
// A preemption attempt locks its victims' VM rows (of other organizations)
// after 2 and before 3.
//
// On PostgreSQL each is SELECT … FOR UPDATE under READ COMMITTED: every read
// that decides (free GPUs, held CPU/RAM/disk, addresses held on a fabric)
// runs after the lock is granted and sees what the previous holder
// committed; a deadlock or serialization failure replays the transaction
// (InTx). On SQLite every transaction is BEGIN IMMEDIATE with a busy timeout:
// the transaction holds the database's write lock from its first statement,
// so two writers never both read "free", and the locks above are no-ops.

// LockVM locks and reads the VM or pod id of organization orgID; nil when
// the organization has none by that id (a deleted row is none).
func (s *Store) LockVM(tx *Txn, orgID, id string) (*models.VM, error) {
	var vms []models.VM
	if err := s.forUpdate(tx.db.Where("id = ? AND organization_id = ? AND deleted_at IS NULL", id, orgID)).Limit(1).Find(&vms).Error; err != nil {
		return nil, err
	}
	if len(vms) == 0 {
		return nil, nil
	}
	return &vms[0], nil
}

// Organization reads one organization, which must exist.
func (s *Store) Organization(tx *Txn, id string) (*models.Organization, error) {
	var o models.Organization
	if err := tx.db.Where("id = ?", id).Take(&o).Error; err != nil {
		return nil, err
	}
	return &o, nil
}

// Node reads a node without locking it; nil when there is none.
func (s *Store) Node(tx *Txn, id string) (*models.Node, error) {
	var n models.Node
	err := tx.db.Where("id = ?", id).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// LockNode locks node n and reloads it into n, so the caller decides on
// what the lock shows.
func (s *Store) LockNode(tx *Txn, n *models.Node) error {
	return s.forUpdate(tx.db.Where("id = ?", n.ID)).Take(n).Error
}

// LockNodes locks the nodes with these ids, in id order (the caller sorts
// them: lock order).
func (s *Store) LockNodes(tx *Txn, ids []string) error {
	var locked []models.Node
	return s.forUpdate(tx.db.Where("id IN ?", ids).Order("id")).Find(&locked).Error
}

// ErrClaimLost says that a GPU claim took fewer GPUs than it asked for:
// someone else holds one, one failed, or one is not where the snapshot
// said. The transaction must roll back.
var ErrClaimLost = errors.New("store: a GPU claim lost a race")

// ClaimGPUs makes vmID hold exactly the GPUs ids of node nodeID and model
// modelID: it lets go of any other GPU it still holds, then takes these
// with a conditional UPDATE whose affected row count must equal len(ids),
// else ErrClaimLost. One holder column per GPU and this count are what
// guard against double booking besides the locks.
func (s *Store) ClaimGPUs(tx *Txn, vmID, nodeID, modelID string, ids []string) error {
	release := tx.db.Model(&models.GPU{}).Where("holder_vm_id = ?", vmID)
	if len(ids) > 0 {
		release = release.Where("id NOT IN ?", ids)
	}
	if err := release.Update("holder_vm_id", nil).Error; err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	res := tx.db.Model(&models.GPU{}).
		Where("id IN ? AND node_id = ? AND model_id = ? AND health = ? AND (holder_vm_id IS NULL OR holder_vm_id = ?)",
			ids, nodeID, modelID, models.GPUHealthy, vmID).
		Update("holder_vm_id", vmID)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != int64(len(ids)) {
		slog.Warn("GPU claim lost a race; replaying", "vm", vmID, "node", nodeID,
			"wanted", len(ids), "claimed", res.RowsAffected)
		return ErrClaimLost
	}
	return nil
}

// HeldGPUs reads the GPUs vmID holds, by node and index; never nil.
func (s *Store) HeldGPUs(tx *Txn, vmID string) ([]*models.GPU, error) {
	gpus := []*models.GPU{}
	if err := tx.db.Where("holder_vm_id = ?", vmID).Order("node_id, idx").Find(&gpus).Error; err != nil {
		return nil, err
	}
	return gpus, nil
}
