package store

import (
	"context"

	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// The pending queue: VMs and pods waiting for room (status pending), each
// organization's turn, and the advisory lock a create that would queue
// takes. A create's and the scheduler's order of locks is in locks.go.

// LockPendingVM locks and reads the pending row id; nil when it is not
// pending any more (placed, terminated, timed out), deleted, or locked by
// another transaction right now: on PostgreSQL the lock is FOR UPDATE SKIP
// LOCKED, so replicas placing the queue at once never wait on each other's
// rows and never place one twice (the second sees it placed, or skips it).
// On SQLite the transaction holds the write lock already.
func (s *Store) LockPendingVM(tx *Txn, id string) (*models.VM, error) {
	q := tx.db.Where("id = ? AND status = ? AND deleted_at IS NULL", id, models.VMPending)
	if s.Dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
	}
	var vms []models.VM
	if err := q.Limit(1).Find(&vms).Error; err != nil {
		return nil, err
	}
	if len(vms) == 0 {
		return nil, nil
	}
	return &vms[0], nil
}

// pendingOrder is each organization's queue order: priority, higher first,
// then arrival (createdAt, rows without one last), then id. The SQL text is
// constant: no value is spliced into it.
const pendingOrder = "priority DESC, CASE WHEN created_at IS NULL THEN 1 ELSE 0 END, created_at, id"

// PendingQueues reads the pending rows of every organization, at most
// perOrg of each, the first in its queue order, grouped by organization
// (by id) and in queue order within each. One statement: a window over the
// partial index of pending rows (migration 0014).
func (s *Store) PendingQueues(ctx context.Context, perOrg int) ([]models.VM, error) {
	var out []models.VM
	err := s.WithContext(ctx).Raw(`SELECT * FROM (
		SELECT vms.*, ROW_NUMBER() OVER (PARTITION BY organization_id ORDER BY `+pendingOrder+`) AS queue_rank
		FROM vms WHERE status = 'pending' AND deleted_at IS NULL) AS q
		WHERE queue_rank <= ? ORDER BY organization_id, queue_rank`, perOrg).Find(&out).Error
	return out, err
}

// QueuePosition is where organization orgID's row id stands in the
// organization's queue, 1 for the first, counting only its own pending
// rows; 0 when the row is not pending (or not the organization's). It
// reads the row itself: a GraphQL page may have read only some columns.
func (s *Store) QueuePosition(ctx context.Context, orgID, id string) (int, error) {
	var rows []models.VM
	if err := s.WithContext(ctx).Select("id, organization_id, status, priority, created_at").
		Where("id = ? AND organization_id = ? AND status = ? AND deleted_at IS NULL", id, orgID, models.VMPending).
		Limit(1).Find(&rows).Error; err != nil || len(rows) == 0 {
		return 0, err
	}
	vm := rows[0]
	q := s.WithContext(ctx).Model(&models.VM{}).
		Where("organization_id = ? AND status = ? AND deleted_at IS NULL AND id <> ?", orgID, models.VMPending, id)
	if vm.CreatedAt == nil {
		q = q.Where("priority > ? OR (priority = ? AND (created_at IS NOT NULL OR id < ?))", vm.Priority, vm.Priority, id)
	} else {
		q = q.Where("priority > ? OR (priority = ? AND created_at IS NOT NULL AND (created_at < ? OR (created_at = ? AND id < ?)))",
			vm.Priority, vm.Priority, *vm.CreatedAt, *vm.CreatedAt, id)
	}
	var ahead int64
	if err := q.Count(&ahead).Error; err != nil {
		return 0, err
	}
	return int(ahead) + 1, nil
}

// QueueTurns answers, for every organization with a pending row that the
// queue served before, the sequence number of its last queue placement
// (ServedFromQueue): the scheduler's turn order across organizations, the
// least recently served first. An organization left out was never served.
func (s *Store) QueueTurns(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		OrganizationID string
		Seq            int64
	}
	err := s.WithContext(ctx).Raw(`SELECT organization_id, seq FROM queue_turns t WHERE EXISTS (
		SELECT 1 FROM vms WHERE vms.organization_id = t.organization_id AND status = 'pending' AND deleted_at IS NULL)`).
		Find(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.OrganizationID] = r.Seq
	}
	return out, nil
}

// ServedFromQueue records, in the transaction that placed one of
// organization orgID's pending rows, that the queue served it: its turn's
// sequence number becomes the highest so far, so the next passes serve
// every other organization with pending rows first. Its row is the last
// lock a queue placement takes (locks.go's lock order). Two placements
// committing at once may draw the same number; the scheduler then orders
// the two by their queues' heads.
func (s *Store) ServedFromQueue(tx *Txn, orgID string) error {
	// WHERE true: SQLite's parser needs one before an upsert's ON CONFLICT
	// after a SELECT.
	return tx.db.Exec(`INSERT INTO queue_turns (organization_id, seq)
		SELECT ?, COALESCE(MAX(seq), 0) + 1 FROM queue_turns WHERE true
		ON CONFLICT (organization_id) DO UPDATE SET seq = excluded.seq`, orgID).Error
}

// queueLock is the class of the advisory locks CountQueued takes on
// PostgreSQL, one per organization (its id hashed; two organizations
// sharing a hash only share the lock).
const queueLock int32 = 0x71756575 // "queu"

// CountQueued locks organization orgID's pending queue until tx ends and
// counts its pending rows other than exceptVMID: a create that would queue
// one more checks the organization's bound under it, so racing creates of
// one organization, on any replica, never both take its last place. The
// lock is a transaction-level advisory lock on PostgreSQL, taken only by
// creates that found no room, after the quota row and with no node locked
// (the nodes a create gave up were let go), and before the event logs'
// (taken at the transaction's tail);
// SQLite's one writer serializes them already.
func (s *Store) CountQueued(tx *Txn, orgID, exceptVMID string) (int, error) {
	if err := s.advisoryLock(tx.db, queueLock, orgKey(orgID)); err != nil {
		return 0, err
	}
	var n int64
	err := tx.db.Model(&models.VM{}).
		Where("organization_id = ? AND status = ? AND deleted_at IS NULL AND id <> ?", orgID, models.VMPending, exceptVMID).
		Count(&n).Error
	return int(n), err
}

// HasPending reports whether any row is pending: a scheduler's pass over
// an empty queue reads nothing else.
func (s *Store) HasPending(ctx context.Context) (bool, error) {
	var ids []string
	err := s.WithContext(ctx).Model(&models.VM{}).Select("id").
		Where("status = 'pending' AND deleted_at IS NULL").Limit(1).Find(&ids).Error
	return len(ids) > 0, err
}
