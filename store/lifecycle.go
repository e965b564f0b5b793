package store

import (
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// Every status change of a VM or pod goes through Apply (one locked row) or
// applyToRows (many rows, locked by the caller's query): both write what
// the lifecycle table's row says — status, statusReason, stamps, what the
// row lets go of — and append one event per row changed, in the same
// transaction. Nothing else in the store writes vms.status.

// Move says where a transition places a VM afresh; nil keeps its node.
type Move struct{ NodeID string }

// Change is one transition to apply: which row of the table, who makes
// it, the detail a Detailed reason carries, and a move for a re-placement.
type Change struct {
	Transition models.TransitionName
	Actor      models.Actor
	Detail     string
	Move       *Move
	// Stage, when set, is the provisioningStage written with it (a row
	// placed is scheduled; an agent's report names the stage it reached).
	Stage string
}

// ErrTransitionNotAllowed answers a change whose transition does not apply
// to the row as it stands (its status, kind or statusReason).
var ErrTransitionNotAllowed = errors.New("store: the transition does not apply to the row as it stands")

// Apply writes ch to the VM vm, which the caller locked in tx, and to vm
// itself, and appends its event.
func (s *Store) Apply(tx *Txn, vm *models.VM, ch Change, now time.Time) (*models.VMEvent, error) {
	t := models.Step(ch.Transition)
	if !t.Allows(vm) {
		return nil, fmt.Errorf("%w: %s on a %s %s", ErrTransitionNotAllowed, t.Name, vm.Status, kindOf(vm))
	}
	set := transitionSet(t, ch.Detail, now)
	if ch.Move != nil {
		set["node_id"] = ch.Move.NodeID
	}
	if ch.Stage != "" {
		set["provisioning_stage"] = ch.Stage
	}
	// Only a pod tears down, and a fresh start elsewhere has nothing to
	// tear down: a flag a fixture set on a plain VM does not survive.
	clearTearingDown := ch.Move != nil || !vm.IsPod()
	if clearTearingDown {
		set["tearing_down"] = false
	}
	if err := tx.db.Model(&models.VM{}).Where("id = ?", vm.ID).Updates(set).Error; err != nil {
		return nil, err
	}
	if t.Resources == models.Releases {
		if err := releaseGPUs(tx.db, []string{vm.ID}); err != nil {
			return nil, err
		}
	}
	vol, err := s.applyToVolume(tx.db, vm, t, ch, now)
	if err != nil {
		return nil, err
	}
	ev := eventOf(t, ch, vm, now)
	ev.VolumeID, ev.FreshVolume = vol.ID, vol.Fresh
	if err := s.appendEvent(tx.db, ev); err != nil {
		return nil, err
	}

	vm.Status, vm.UpdatedAt, vm.StatusChangedAt = t.To, now, &now
	if reason, ok := t.ReasonFor(ch.Detail); ok {
		vm.StatusReason = reason
	}
	vm.InterruptedAt = nil
	if t.StampsInterruptedAt() {
		vm.InterruptedAt = &now
	}
	if t.To == models.VMDeploying {
		vm.Generation++
	}
	if t.Deletes {
		vm.DeletedAt = &now
	}
	if ch.Move != nil {
		id := ch.Move.NodeID
		vm.NodeID = &id
	}
	if ch.Stage != "" {
		vm.ProvisioningStage = ch.Stage
	}
	if clearTearingDown {
		vm.TearingDown = false
	}
	return ev, nil
}

// SetStage writes the provisioningStage ch.Stage to the VM vm, which the
// caller locked in tx, and appends its event (ch.Transition, from and to
// the row's status, its statusReason kept): the status does not change.
func (s *Store) SetStage(tx *Txn, vm *models.VM, ch Change, now time.Time) (*models.VMEvent, error) {
	if err := tx.db.Model(&models.VM{}).Where("id = ?", vm.ID).
		Updates(map[string]any{"provisioning_stage": ch.Stage, "updated_at": now}).Error; err != nil {
		return nil, err
	}
	ev := &models.VMEvent{VMID: vm.ID, OrganizationID: vm.OrganizationID, From: vm.Status, To: vm.Status,
		Reason: vm.StatusReason, Transition: ch.Transition, ActorKind: ch.Actor.Kind, ActorID: ch.Actor.ID, At: now,
		ProvisioningStage: ch.Stage}
	if err := s.appendEvent(tx.db, ev); err != nil {
		return nil, err
	}
	vm.ProvisioningStage, vm.UpdatedAt = ch.Stage, now
	return ev, nil
}

// appendEvent appends ev to the log: numbered in its organization under
// the log's lock, and noted to the listeners.
func (s *Store) appendEvent(db *gorm.DB, ev *models.VMEvent) error {
	if err := s.lockEventLog(db); err != nil {
		return err
	}
	if err := drawSeqs(db, []*models.VMEvent{ev}); err != nil {
		return err
	}
	if err := db.Create(ev).Error; err != nil {
		return err
	}
	return s.note(db, TopicVMEvents, ev.ID)
}

// lockedRow is what applyToRows needs of a row the caller locked.
type lockedRow struct {
	ID                string
	OrganizationID    string
	Status            models.VMStatus
	StatusReason      string
	CapabilityTier    string
	ProvisioningStage string
}

// lockRows locks and reads the rows q selects from vms, by id.
func (s *Store) lockRows(q *gorm.DB) ([]lockedRow, error) {
	var rows []lockedRow
	err := s.forUpdate(q.Table("vms").
		Select("id, organization_id, status, status_reason, capability_tier, provisioning_stage").Order("id")).Scan(&rows).Error
	return rows, err
}

// applyToRows applies the transition of ch to every row of rows it allows
// (the others are left as they are) and appends their events in one
// statement; it answers how many rows changed.
func (s *Store) applyToRows(db *gorm.DB, rows []lockedRow, ch Change, now time.Time) (int64, error) {
	t := models.Step(ch.Transition)
	var ids []string
	var events []*models.VMEvent
	for _, r := range rows {
		vm := &models.VM{ID: r.ID, OrganizationID: r.OrganizationID, Status: r.Status,
			StatusReason: r.StatusReason, CapabilityTier: r.CapabilityTier, ProvisioningStage: r.ProvisioningStage}
		if !t.Allows(vm) {
			continue
		}
		ids = append(ids, r.ID)
		events = append(events, eventOf(t, ch, vm, now))
	}
	if len(ids) == 0 {
		return 0, nil
	}
	for _, part := range chunks(ids, 500) {
		if err := db.Table("vms").Where("id IN ?", part).Updates(transitionSet(t, ch.Detail, now)).Error; err != nil {
			return 0, err
		}
		if t.Resources == models.Releases {
			if err := releaseGPUs(db, part); err != nil {
				return 0, err
			}
		}
	}
	if t.DiskGone {
		if err := deleteVolumes(db, ids, now); err != nil {
			return 0, err
		}
	}
	if err := s.lockEventLog(db); err != nil {
		return 0, err
	}
	if err := drawSeqs(db, events); err != nil {
		return 0, err
	}
	if err := db.CreateInBatches(events, 200).Error; err != nil {
		return 0, err
	}
	if err := s.note(db, TopicVMEvents, events[len(events)-1].ID); err != nil {
		return 0, err
	}
	return int64(len(ids)), nil
}

// transitionSet is what a transition writes: the new status and when it
// began, its statusReason unless the row keeps it, interruptedAt stamped on
// entering interrupted and cleared on every other transition, a new
// generation on entering deploying, deletedAt for a row that leaves the API.
func transitionSet(t models.Transition, detail string, now time.Time) map[string]any {
	set := map[string]any{"status": t.To, "updated_at": now, "status_changed_at": now, "interrupted_at": nil}
	if reason, ok := t.ReasonFor(detail); ok {
		set["status_reason"] = reason
	}
	if t.StampsInterruptedAt() {
		set["interrupted_at"] = now
	}
	if t.To == models.VMDeploying {
		set["generation"] = gorm.Expr("generation + 1")
	}
	if t.Deletes {
		set["deleted_at"] = now
	}
	return set
}

func eventOf(t models.Transition, ch Change, vm *models.VM, now time.Time) *models.VMEvent {
	reason, ok := t.ReasonFor(ch.Detail)
	if !ok {
		reason = vm.StatusReason
	}
	stage := vm.ProvisioningStage
	if ch.Stage != "" {
		stage = ch.Stage
	}
	return &models.VMEvent{VMID: vm.ID, OrganizationID: vm.OrganizationID, From: vm.Status, To: t.To,
		Reason: reason, Transition: t.Name, ActorKind: ch.Actor.Kind, ActorID: ch.Actor.ID, At: now,
		ProvisioningStage: stage}
}

// applyToVolume does to vm's volume what transition t does to the row:
// a run it starts is bound to one on the node it runs on (bindVolume); a
// row whose disk goes with it loses its volume; a run that reached
// running has written to its volume. vm is as it was before t.
func (s *Store) applyToVolume(db *gorm.DB, vm *models.VM, t models.Transition, ch Change, now time.Time) (volumeBinding, error) {
	switch {
	case t.DiskGone:
		return volumeBinding{}, deleteVolumes(db, []string{vm.ID}, now)
	case t.To == models.VMDeploying:
		node := ""
		if vm.NodeID != nil {
			node = *vm.NodeID
		}
		if ch.Move != nil {
			node = ch.Move.NodeID
		}
		return bindVolume(db, vm, node, vm.Generation+1, now)
	case t.To == models.VMRunning && vm.Status == models.VMDeploying:
		return volumeBinding{}, volumeUsed(db, vm.ID)
	}
	return volumeBinding{}, nil
}

// drawSeqs numbers events within their organizations: each takes the
// next of its organization's counter (vm_event_seqs, which never goes
// back, whatever retention deletes). The caller holds the log's lock
// (lockEventLog on PostgreSQL; SQLite's transactions write one at a
// time), and only holders of it touch the counters, so seqs commit in
// order as ids do, and the counters' rows take no part in any other
// lock order.
func drawSeqs(db *gorm.DB, events []*models.VMEvent) error {
	count := map[string]int64{}
	var orgs []string
	for _, ev := range events {
		if count[ev.OrganizationID] == 0 {
			orgs = append(orgs, ev.OrganizationID)
		}
		count[ev.OrganizationID]++
	}
	next := make(map[string]int64, len(orgs))
	for _, org := range orgs {
		var last int64
		err := db.Raw(`INSERT INTO vm_event_seqs (organization_id, last) VALUES (?, ?)
			ON CONFLICT (organization_id) DO UPDATE SET last = vm_event_seqs.last + excluded.last RETURNING last`,
			org, count[org]).Scan(&last).Error
		if err != nil {
			return err
		}
		next[org] = last - count[org]
	}
	for _, ev := range events {
		next[ev.OrganizationID]++
		ev.Seq = next[ev.OrganizationID]
	}
	return nil
}

func releaseGPUs(db *gorm.DB, vmIDs []string) error {
	return db.Exec("UPDATE gpus SET holder_vm_id = NULL WHERE holder_vm_id IN ?", vmIDs).Error
}

func kindOf(vm *models.VM) string {
	if vm.IsPod() {
		return "pod"
	}
	return "VM"
}

// chunks cuts ids into parts of at most n, so no statement binds too many
// parameters.
func chunks(ids []string, n int) [][]string {
	var out [][]string
	for len(ids) > n {
		out = append(out, ids[:n])
		ids = ids[n:]
	}
	return append(out, ids)
}
