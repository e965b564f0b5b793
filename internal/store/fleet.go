package store

import (
	"errors"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// The statements of the fleet operator's paths (package fleet) and of
// preemption (package compute), run inside the caller's InTx transaction.
// They keep the lock order of restart.go: VM rows before node rows before
// organization and fabric rows.

// Workloads selects VM and pod rows for a bulk transition; the zero value of
// a field leaves it unconstrained. Deleted rows are never selected.
type Workloads struct {
	NodeIDs        []string
	OrganizationID string
	ComputeClass   string
	// Reason keeps rows whose statusReason is exactly it; ReasonPrefix
	// those whose statusReason starts with it; ReasonNot leaves out rows
	// whose statusReason is exactly it.
	Reason, ReasonPrefix, ReasonNot string
	// InterruptedBefore keeps rows interrupted (interruptedAt) before it;
	// rows without an interruptedAt are left out.
	InterruptedBefore time.Time
	// InStatusBefore keeps rows whose status began before it
	// (statusChangedAt; rows written before that column existed count from
	// updatedAt).
	InStatusBefore time.Time
	// Limit bounds how many rows are selected, the first by id.
	Limit int
}

// where is the selection on vms, limited to the transition's from-statuses.
func (w Workloads) where(db *gorm.DB, from []models.VMStatus) *gorm.DB {
	q := db.Where("deleted_at IS NULL AND status IN ?", from)
	if len(w.NodeIDs) > 0 {
		q = q.Where("node_id IN ?", w.NodeIDs)
	}
	if w.OrganizationID != "" {
		q = q.Where("organization_id = ?", w.OrganizationID)
	}
	if w.ComputeClass != "" {
		q = q.Where("compute_class = ?", w.ComputeClass)
	}
	if w.Reason != "" {
		q = q.Where("status_reason = ?", w.Reason)
	}
	if w.ReasonPrefix != "" {
		// The prefixes of the lifecycle hold no LIKE wildcard.
		q = q.Where("status_reason LIKE ?", w.ReasonPrefix+"%")
	}
	if w.ReasonNot != "" {
		q = q.Where("status_reason <> ?", w.ReasonNot)
	}
	if !w.InterruptedBefore.IsZero() {
		q = q.Where("interrupted_at IS NOT NULL AND interrupted_at < ?", w.InterruptedBefore)
	}
	if !w.InStatusBefore.IsZero() {
		q = q.Where("COALESCE(status_changed_at, updated_at) < ?", w.InStatusBefore)
	}
	if w.Limit > 0 {
		q = q.Limit(w.Limit)
	}
	return q
}

// ApplyToWorkloads locks the rows w selects that ch's transition applies
// from, by id, and applies ch to each; it answers how many changed.
func (s *Store) ApplyToWorkloads(tx *Txn, w Workloads, ch Change, now time.Time) (int64, error) {
	rows, err := s.LockWorkloads(tx, w, models.Step(ch.Transition).From)
	if err != nil || rows.Len() == 0 {
		return 0, err
	}
	return s.ApplyToLocked(tx, rows, ch, now)
}

// LockedRows are VM and pod rows a transaction locked (LockWorkloads), to
// apply one or more transitions to (ApplyToLocked).
type LockedRows struct{ rows []lockedRow }

// Len is how many rows are locked.
func (r LockedRows) Len() int { return len(r.rows) }

// LockWorkloads locks and reads, by id, the rows w selects whose status is
// one of from.
func (s *Store) LockWorkloads(tx *Txn, w Workloads, from []models.VMStatus) (LockedRows, error) {
	rows, err := s.lockRows(w.where(tx.db, from))
	return LockedRows{rows: rows}, err
}

// ApplyToLocked applies ch to every row of rows its transition allows (the
// others are left as they are) and answers how many changed.
func (s *Store) ApplyToLocked(tx *Txn, rows LockedRows, ch Change, now time.Time) (int64, error) {
	return s.applyToRows(tx.db, rows.rows, ch, now)
}

// LockOrganizationWorkloads locks every row of organization orgID, by id,
// so that a restart of one of them either finished before or reads the
// organization's new state after (it locks its VM row first).
func (s *Store) LockOrganizationWorkloads(tx *Txn, orgID string) error {
	var ids []string
	return s.forUpdate(tx.db.Table("vms").Select("id").Where("organization_id = ?", orgID).Order("id")).
		Scan(&ids).Error
}

// LockVMsByIDs locks and reads the rows with these ids, whatever their
// organization (preemption's victims), by id; deleted rows are left out.
func (s *Store) LockVMsByIDs(tx *Txn, ids []string) ([]*models.VM, error) {
	out := []*models.VM{}
	if len(ids) == 0 {
		return out, nil
	}
	err := s.forUpdate(tx.db.Where("id IN ? AND deleted_at IS NULL", ids).Order("id")).Find(&out).Error
	return out, err
}

// LockNodeByID locks and reads node id; nil when there is none.
func (s *Store) LockNodeByID(tx *Txn, id string) (*models.Node, error) {
	var n models.Node
	err := s.forUpdate(tx.db.Where("id = ?", id)).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// SetNodeLeavingAt writes the leavingAt of node (which the caller locked);
// nil clears it. A change is a node event by by.
func (s *Store) SetNodeLeavingAt(tx *Txn, node *models.Node, at *time.Time, by models.Actor, now time.Time) error {
	if err := tx.db.Model(&models.Node{}).Where("id = ?", node.ID).Update("leaving_at", at).Error; err != nil {
		return err
	}
	if sameInstant(node.LeavingAt, at) {
		return nil
	}
	return s.appendNodeEvents(tx.db, []*models.NodeEvent{{NodeID: node.ID, Kind: models.NodeEventLeavingAt,
		FromLeavingAt: node.LeavingAt, ToLeavingAt: at, ActorKind: by.Kind, ActorID: by.ID, At: now}})
}

func sameInstant(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// LockOrganization locks and reads organization id; nil when there is none.
func (s *Store) LockOrganization(tx *Txn, id string) (*models.Organization, error) {
	var o models.Organization
	err := s.forUpdate(tx.db.Where("id = ?", id)).Take(&o).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// SetOrganizationState writes organization id's state, and tells open
// streams (at commit) to check their credentials again: a suspended or
// deleted organization's streams close.
func (s *Store) SetOrganizationState(tx *Txn, id string, state models.OrgState) error {
	if err := tx.db.Model(&models.Organization{}).Where("id = ?", id).Update("state", state).Error; err != nil {
		return err
	}
	return s.note(tx.db, TopicCredentials, 0)
}
