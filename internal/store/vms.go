package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// VM and pod rows (vms): a VM's own row and the sets of rows a transition
// moves at once, locked and read inside the caller's transaction (locks.go
// says in which order), and the reads behind the API's lists and loaders.
// Every read of a VM is scoped to an organization and skips deleted rows
// (deleted_at set: a pod interrupted for 7 days), which the API no longer
// shows; the row and its events stay for the audit trail.

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
	if err := s.forUpdate(q.Order("id")).Find(&locked).Error; err != nil {
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

// VMsByIDs reads the organization's VMs with these ids; others' do not exist.
func (s *Store) VMsByIDs(ctx context.Context, orgID string, ids []string, cols Columns) ([]*models.VM, error) {
	cond, arg := s.in("id", ids)
	return vms.read(ctx, s, cols, nil, `organization_id = ? AND deleted_at IS NULL AND `+cond, orgID, arg)
}

// HoldersOf reads who holds GPUs: the organization of each of these VMs
// and pods, whichever it is. Only the fleet's operator may be answered it
// (the caller checks); a tenant's reads go through VMsByIDs.
func (s *Store) HoldersOf(ctx context.Context, vmIDs []string) ([]*models.GPUHolder, error) {
	var out []*models.GPUHolder
	err := s.WithContext(ctx).Model(&models.VM{}).Select("id", "organization_id").
		Where("id IN ? AND deleted_at IS NULL", vmIDs).Find(&out).Error
	return out, err
}

// VMsByNodeIDs reads the organization's VMs on these nodes, oldest first.
func (s *Store) VMsByNodeIDs(ctx context.Context, orgID string, nodeIDs []string, cols Columns) ([]*models.VM, error) {
	cond, arg := s.in("node_id", nodeIDs)
	return vms.read(ctx, s, cols, []string{"node_id"}, `organization_id = ? AND deleted_at IS NULL AND `+cond+` ORDER BY created_at, id`, orgID, arg)
}

// VMPage lists the organization's VMs, newest first, with the total count.
// Without count it runs no count(*): it reads one row past the page
// instead and answers a total that says only whether more follow (offset
// plus the rows read), which is all the page's next offset needs.
func (s *Store) VMPage(ctx context.Context, orgID string, statuses []models.VMStatus, offset, limit int, count bool, cols Columns) ([]*models.VM, int64, error) {
	q := s.WithContext(ctx).Model(&models.VM{}).Where("organization_id = ? AND deleted_at IS NULL", orgID)
	if len(statuses) > 0 {
		q = q.Where("status IN ?", statuses)
	}
	var total int64
	if count {
		if err := q.Count(&total).Error; err != nil {
			return nil, 0, err
		}
	}
	read := limit
	if !count {
		read = limit + 1
	}
	list, into := vms.pick(cols)
	out, err := vms.readQuery(ctx, s, q.Select(list).Order("created_at DESC NULLS LAST, id DESC").Offset(offset).Limit(read), into)
	if err != nil || count {
		return out, total, err
	}
	total = int64(offset + len(out))
	if len(out) > limit {
		out = out[:limit]
	}
	return out, total, nil
}

// InsertVM writes a new VM or pod row, which must be pending: the
// create's transition (create-placed, create-queued) is then applied to
// it with Apply, which writes its one event.
func (s *Store) InsertVM(tx *Txn, vm *models.VM) error {
	if vm.Status != models.VMPending {
		return errors.New("store: a new VM row is written pending")
	}
	return tx.db.Create(vm).Error
}

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
		Find(&ids).Error
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

// VMSort is the VMs' keyset order, the order of VMPage: newest first,
// rows without a creation time last.
var VMSort = []SortKey{{Column: "created_at", Desc: true}}

// VMsAfter lists the organization's VMs as VMPage does, after a (nil: from
// the first), at most limit, and whether more follow; total counts every
// match when count.
func (s *Store) VMsAfter(ctx context.Context, orgID string, statuses []models.VMStatus, a *After, limit int, count bool) ([]*models.VM, bool, int64, error) {
	db := s.WithContext(ctx).Model(&models.VM{}).Where("organization_id = ? AND deleted_at IS NULL", orgID)
	if len(statuses) > 0 {
		db = db.Where("status IN ?", statuses)
	}
	out := []*models.VM{}
	return keysetPage(db, VMSort, a, limit, count, &out)
}

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

// SetEndpoint records url as where VM vm answers (its endpointUrl), as
// its node's runtime reported it; the caller locked vm in tx.
func (s *Store) SetEndpoint(tx *Txn, vm *models.VM, url string, now time.Time) error {
	if err := tx.db.Model(&models.VM{}).Where("id = ?", vm.ID).
		Updates(map[string]any{"endpoint_url": url, "updated_at": now}).Error; err != nil {
		return err
	}
	vm.EndpointURL, vm.UpdatedAt = url, now
	return nil
}
