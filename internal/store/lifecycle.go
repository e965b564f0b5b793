package store

import (
	"errors"
	"fmt"
	"slices"
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
	// Handover: what a releasing transition lets go of passes to another
	// workload in the same transaction (preemption's victims), so it is
	// released at once wherever the row runs. On a node an agent reports
	// for the row still tears down (its node is told stop), holding
	// nothing meanwhile (handed_over). Only Apply hands over.
	Handover bool
	// Fresh: the row was inserted in this same transaction (a create), so
	// it has no volume yet and none is read or let go of before its first
	// is bound.
	Fresh bool
}

// ErrTransitionNotAllowed answers a change whose transition does not apply
// to the row as it stands (its status, kind or statusReason).
var ErrTransitionNotAllowed = errors.New("store: the transition does not apply to the row as it stands")

// Teardown (docs/contract.md#agent): a releasing transition of a row on a
// node an agent reports for does not let go of its GPUs, host share and
// address; it sets tearing_down, the node's agent is told stop, and the
// agent's gone report (or the sweep, when the node is not online for
// --teardown-grace) frees them (models.Frees). On a node no agent ever
// reported for nothing runs, so they are released at once, as before.
// While tearing_down a row holds what it held whatever its status: the
// snapshot's host shares and address holders, the quota count and the
// node's assignments read the flag beside the holding statuses. A handover
// (preemption) is the exception: the row tears down on its node all the
// same, but what it held passed on at once, so its teardown is handed_over
// and holds nothing (tearingDownHolds); its gone report only clears it.

// Apply writes ch to the VM vm, which the caller locked in tx, and to vm
// itself, and appends its event.
func (s *Store) Apply(tx *Txn, vm *models.VM, ch Change, now time.Time) (*models.VMEvent, error) {
	t := models.Step(ch.Transition)
	if !t.Allows(vm) {
		return nil, fmt.Errorf("%w: %s on a %s %s", ErrTransitionNotAllowed, t.Name, vm.Status, kindOf(vm))
	}
	action := t.ActionFor(vm)
	set := transitionSet(t, ch.Detail, action, now)
	if ch.Move != nil {
		set["node_id"] = ch.Move.NodeID
	}
	if ch.Stage != "" {
		set["provisioning_stage"] = ch.Stage
	}
	agentNode := false
	if t.Resources == models.Releases {
		var err error
		if agentNode, err = s.tearsDown(tx.db, vm.NodeID, t); err != nil {
			return nil, err
		}
	}
	td := teardownAfter(t, ch, vm, agentNode)
	release, tearingDown, handedOver := td.release, td.tearingDown, td.handedOver
	if tearingDown != vm.TearingDown {
		set["tearing_down"] = tearingDown
	}
	if handedOver != vm.HandedOver {
		set["handed_over"] = handedOver
	}
	if err := tx.db.Model(&models.VM{}).Where("id = ?", vm.ID).Updates(set).Error; err != nil {
		return nil, err
	}
	if release {
		if err := releaseGPUs(tx.db, []string{vm.ID}); err != nil {
			return nil, err
		}
	}
	generation := vm.Generation
	if action != "" {
		generation++
	}
	vol, err := s.applyToVolume(tx.db, vm, t, ch, now)
	if err != nil {
		return nil, err
	}
	ev := eventOf(t, ch, vm, generation, now)
	ev.VolumeID, ev.FreshVolume = vol.ID, vol.Fresh
	if ev.StorageGb, err = keptStorage(tx.db, t, ev.To, vm.ID); err != nil {
		return nil, err
	}
	if err := s.appendEvent(tx.db, ev); err != nil {
		return nil, err
	}

	if !t.SameStatus {
		vm.Status, vm.StatusChangedAt = t.To, &now
		vm.InterruptedAt = nil
		if t.StampsInterruptedAt() {
			vm.InterruptedAt = &now
		}
	}
	vm.UpdatedAt = now
	if reason, ok := t.ReasonFor(ch.Detail); ok {
		vm.StatusReason = reason
	}
	if action != "" {
		vm.Generation, vm.Action = generation, action
	}
	if t.SettlesAction {
		vm.Action = models.ActionRun
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
	vm.TearingDown, vm.HandedOver = tearingDown, handedOver
	return ev, nil
}

// tearsDown reports whether a change t of a row on node nodeID leaves
// what it releases to the node to tear down: the node has had an agent
// report and t is not the agent's report that the row ended
// (teardownAfter decides what that means for the row).
func (s *Store) tearsDown(db *gorm.DB, nodeID *string, t models.Transition) (bool, error) {
	if nodeID == nil || t.NodeEnded {
		return false, nil
	}
	agents, err := agentNodes(db, []string{*nodeID})
	return len(agents) > 0, err
}

// teardown is what a transition leaves of a row's teardown: whether the
// row lets go of its GPUs, host share and address now (release), and its
// tearing_down and handed_over flags after it.
type teardown struct{ release, tearingDown, handedOver bool }

// teardownAfter decides teardown for the transition t of ch on the row vm
// (its status, kind and flags before it); agentNode: its node has had an
// agent report and t is not the node's own report that it ended
// (tearsDown). Apply and applyToRows both decide here, so one row and
// many rows never differ.
func teardownAfter(t models.Transition, ch Change, vm *models.VM, agentNode bool) teardown {
	td := teardown{tearingDown: vm.TearingDown, handedOver: vm.HandedOver}
	switch t.Resources {
	case models.Releases:
		switch {
		case agentNode && ch.Handover:
			// The node still runs it and is told stop; the preemptor takes
			// its GPUs and share in this transaction, so none stay held.
			td = teardown{release: true, tearingDown: true, handedOver: true}
		case agentNode:
			// Held until the node reports it gone; a teardown already
			// handed over stays so: it holds nothing.
			td.tearingDown = true
		default:
			td.release = true
			// The rule before teardown was real: only a pod's flag (a
			// fixture's) survives a release where nothing runs.
			td.tearingDown = td.tearingDown && vm.IsPod()
		}
	case models.Frees:
		td.release, td.tearingDown = true, false
	default:
		// Only a pod's fixture flag outlives a transition, and a fresh
		// start elsewhere has nothing to tear down.
		if ch.Move != nil || !vm.IsPod() {
			td.tearingDown = false
		}
	}
	td.handedOver = td.handedOver && td.tearingDown
	return td
}

// agentNodes are those of the nodes ids that an agent has reported for.
func agentNodes(db *gorm.DB, ids []string) (map[string]bool, error) {
	var found []string
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	err := db.Table("nodes").Where("id IN ? AND agent_reported_at IS NOT NULL", ids).Pluck("id", &found).Error
	for _, id := range found {
		out[id] = true
	}
	return out, err
}

// SetStage writes the provisioningStage ch.Stage to the VM vm, which the
// caller locked in tx, and appends its event (ch.Transition, from and to
// the row's status, its statusReason kept): the status does not change.
func (s *Store) SetStage(tx *Txn, vm *models.VM, ch Change, now time.Time) (*models.VMEvent, error) {
	if err := tx.db.Model(&models.VM{}).Where("id = ?", vm.ID).
		Updates(map[string]any{"provisioning_stage": ch.Stage, "updated_at": now}).Error; err != nil {
		return nil, err
	}
	// An event of no transition of the table: the status and reason kept.
	t := models.Transition{Name: ch.Transition, SameStatus: true, KeepsReason: true}
	ev := eventOf(t, ch, vm, vm.Generation, now)
	if err := s.appendEvent(tx.db, ev); err != nil {
		return nil, err
	}
	vm.ProvisioningStage, vm.UpdatedAt = ch.Stage, now
	return ev, nil
}

// appendEvent appends ev to the log at the transaction's tail, where it is
// numbered in its organization and noted to the listeners (writeTail).
func (s *Store) appendEvent(db *gorm.DB, ev *models.VMEvent) error {
	return s.appendVMEvents(db, ev)
}

// lockedRow is what applyToRows needs of a row the caller locked.
type lockedRow struct {
	ID                string
	OrganizationID    string
	Status            models.VMStatus
	StatusReason      string
	CapabilityTier    string
	ProvisioningStage string
	Generation        int
	TearingDown       bool
	HandedOver        bool
	PricePerHourCents int
	// KeptGb is the size of its live disk or volume (metering's storage).
	KeptGb int
	// AgentNode: its node has had an agent report (it tears down).
	AgentNode bool
}

// lockRows locks and reads the rows q selects from vms, by id.
func (s *Store) lockRows(q *gorm.DB) ([]lockedRow, error) {
	var rows []lockedRow
	err := s.forUpdate(q.Table("vms").
		Select("id, organization_id, status, status_reason, capability_tier, provisioning_stage, generation, tearing_down, handed_over, price_per_hour_cents, " +
			"COALESCE((SELECT SUM(size_gb) FROM volumes WHERE volumes.vm_id = vms.id AND volumes.deleted_at IS NULL), 0) AS kept_gb, " +
			"EXISTS (SELECT 1 FROM nodes WHERE nodes.id = vms.node_id AND nodes.agent_reported_at IS NOT NULL) AS agent_node").
		Order("id")).Find(&rows).Error
	return rows, err
}

// applyToRows applies the transition of ch to every row of rows it allows
// (the others are left as they are) and appends their events in one
// statement; it answers how many rows changed. A releasing transition
// tears down the rows on nodes an agent reports for (see Apply).
func (s *Store) applyToRows(db *gorm.DB, rows []lockedRow, ch Change, now time.Time) (int64, error) {
	t := models.Step(ch.Transition)
	// No transition of many rows starts a generation (a restart, a create
	// and the scheduler's placement are one row's, through Apply), so the
	// events below carry each row's generation as it is.
	if t.ActionFor(&models.VM{}) != "" {
		return 0, fmt.Errorf("store: %s starts a generation, which only Apply of one row does", t.Name)
	}
	if ch.Handover {
		return 0, fmt.Errorf("store: %s hands over, which only Apply of one row does", t.Name)
	}
	// What changes of each row's teardown, in three lists: the rows that
	// let go of what they hold now, those that start tearing down, and
	// those whose teardown (handed over or not) ends.
	var ids, release, down, ended []string
	var events []*models.VMEvent
	for _, r := range rows {
		vm := &models.VM{ID: r.ID, OrganizationID: r.OrganizationID, Status: r.Status, StatusReason: r.StatusReason,
			CapabilityTier: r.CapabilityTier, ProvisioningStage: r.ProvisioningStage, TearingDown: r.TearingDown, HandedOver: r.HandedOver,
			PricePerHourCents: r.PricePerHourCents}
		if !t.Allows(vm) {
			continue
		}
		ids = append(ids, r.ID)
		ev := eventOf(t, ch, vm, r.Generation, now)
		if ev.To == models.VMStopped && !t.DiskGone {
			ev.StorageGb = r.KeptGb
		}
		events = append(events, ev)
		td := teardownAfter(t, ch, vm, r.AgentNode && !t.NodeEnded)
		if td.release {
			release = append(release, r.ID)
		}
		switch {
		case td.tearingDown && !r.TearingDown:
			down = append(down, r.ID)
		case !td.tearingDown && r.TearingDown:
			ended = append(ended, r.ID)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	set := transitionSet(t, ch.Detail, "", now)
	for part := range slices.Chunk(ids, 500) {
		if err := db.Table("vms").Where("id IN ?", part).Updates(set).Error; err != nil {
			return 0, err
		}
	}
	for part := range slices.Chunk(down, 500) {
		if err := db.Table("vms").Where("id IN ?", part).Update("tearing_down", true).Error; err != nil {
			return 0, err
		}
	}
	for part := range slices.Chunk(ended, 500) {
		if err := db.Table("vms").Where("id IN ?", part).
			Updates(map[string]any{"tearing_down": false, "handed_over": false}).Error; err != nil {
			return 0, err
		}
	}
	for part := range slices.Chunk(release, 500) {
		if err := releaseGPUs(db, part); err != nil {
			return 0, err
		}
	}
	if t.DiskGone {
		if err := deleteVolumes(db, ids, now); err != nil {
			return 0, err
		}
	}
	if err := s.appendVMEvents(db, events...); err != nil {
		return 0, err
	}
	return int64(len(ids)), nil
}

// transitionSet is what a transition writes: the new status and when it
// began, its statusReason unless the row keeps it, interruptedAt stamped on
// entering interrupted and cleared on every other transition, a new
// generation with its action when it starts one, deletedAt for a row that
// leaves the API. A SameStatus transition writes no status, stamp or
// interruptedAt.
func transitionSet(t models.Transition, detail, action string, now time.Time) map[string]any {
	set := map[string]any{"updated_at": now}
	if !t.SameStatus {
		set["status"], set["status_changed_at"], set["interrupted_at"] = t.To, now, nil
	}
	if reason, ok := t.ReasonFor(detail); ok {
		set["status_reason"] = reason
	}
	if t.StampsInterruptedAt() && !t.SameStatus {
		set["interrupted_at"] = now
	}
	if action != "" {
		set["generation"] = gorm.Expr("generation + 1")
		set["action"] = action
	}
	if t.SettlesAction {
		set["action"] = models.ActionRun
	}
	if t.Deletes {
		set["deleted_at"] = now
	}
	return set
}

// eventOf is t's event for vm, which has generation after it.
func eventOf(t models.Transition, ch Change, vm *models.VM, generation int, now time.Time) *models.VMEvent {
	reason, ok := t.ReasonFor(ch.Detail)
	if !ok {
		reason = vm.StatusReason
	}
	stage := vm.ProvisioningStage
	if ch.Stage != "" {
		stage = ch.Stage
	}
	price := vm.PricePerHourCents
	return &models.VMEvent{VMID: vm.ID, OrganizationID: vm.OrganizationID, From: vm.Status, To: t.ToFrom(vm.Status),
		Reason: reason, Transition: t.Name, ActorKind: ch.Actor.Kind, ActorID: ch.Actor.ID, At: now,
		Generation: &generation, ProvisioningStage: stage, PricePerHourCents: &price}
}

// keptStorage is what an event of transition t, whose status after it is
// to, records as the storage the row vmID keeps for metering: the size of
// its live disk or volume where it is stopped with its disk kept, 0
// otherwise (only a stopped row's disk is billed as storage). Its volume
// is read only then, so other transitions cost no statement.
func keptStorage(db *gorm.DB, t models.Transition, to models.VMStatus, vmID string) (int, error) {
	if to != models.VMStopped || t.DiskGone {
		return 0, nil
	}
	var gb int
	err := db.Raw("SELECT COALESCE(SUM(size_gb), 0) FROM volumes WHERE vm_id = ? AND deleted_at IS NULL", vmID).Find(&gb).Error
	return gb, err
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
		return bindVolume(db, vm, node, vm.Generation+1, now, ch.Fresh)
	case t.To == models.VMRunning && vm.Status == models.VMDeploying:
		return volumeBinding{}, volumeUsed(db, vm.ID)
	}
	return volumeBinding{}, nil
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
