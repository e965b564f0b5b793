package compute

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
	"gpugraph/placement"
	"gpugraph/store"
)

// Result is a VM after a successful restart, with what its answer shows
// besides its row.
type Result struct {
	VM    *models.VM
	GPUs  []*models.Gpu    // the GPUs it holds now, lowest index first
	Model *models.GpuModel // its GPU model; nil on a CPU-only row
}

// maxReplays bounds how often a restart whose chosen node changed under it
// (see errMoved) starts over; engine-level races are replayed by store.Tx.
const maxReplays = 5

// Restart restarts the VM or pod id of organization orgID as SPEC §5 says,
// checking and claiming in one transaction. Every refusal is an
// *apierr.Error with the code, HTTP status and message of the contract.
func Restart(ctx context.Context, st *store.Store, orgID, id string) (*Result, error) {
	var res *Result
	var seen *models.VM
	for attempt := 1; ; attempt++ {
		err := st.Tx(ctx, func(tx *gorm.DB) error {
			r := &restart{st: st, tx: tx, fw: placement.Default(), now: store.Now()}
			var err error
			res, err = r.run(orgID, id)
			if r.vm != nil {
				seen = r.vm
			}
			return err
		})
		switch {
		case err == nil:
			return res, nil
		case errors.Is(err, errMoved) && attempt < maxReplays:
			continue
		case errors.Is(err, errMoved), store.Retryable(err):
			return nil, busy(seen)
		}
		return nil, err
	}
}

// restart is one attempt, inside one transaction.
type restart struct {
	st  *store.Store
	tx  *gorm.DB
	fw  *placement.Framework
	now time.Time

	vm    *models.VM
	model *models.GpuModel
	req   *placement.Request
}

func (r *restart) run(orgID, id string) (*Result, error) {
	// The VM row first: two restarts of one VM serialize here, and the
	// second then sees the first one's status.
	var vm models.VM
	err := r.st.ForUpdate(r.tx.Where("id = ? AND organization_id = ?", id, orgID)).Take(&vm).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	r.vm = &vm

	// The checks that need no node, in the contract's order.
	switch {
	case vm.ManagedBy == ManagedByServing:
		return nil, readOnly(&vm)
	case vm.Status == models.VMTerminated:
		return nil, terminated(&vm)
	case vm.Status == models.VMPending, vm.Status == models.VMDeploying:
		return nil, notReady(&vm)
	}

	if err := r.request(orgID); err != nil {
		return nil, err
	}

	var own *models.Node
	if vm.NodeID != nil {
		var n models.Node
		err := r.tx.Where("id = ?", *vm.NodeID).Take(&n).Error
		switch {
		case err == nil:
			own = &n
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return nil, err
		}
	}

	switch vm.Status {
	case models.VMStopped, models.VMFailed, models.VMInterrupted:
		if lostNode(&vm, own) {
			return r.replace(own)
		}
	}

	// From here on the VM stays on its node: lock it, and decide on what the
	// lock shows.
	var info *placement.NodeInfo
	if own != nil {
		if err := r.st.ForUpdate(r.tx.Where("id = ?", own.ID)).Take(own).Error; err != nil {
			return nil, err
		}
		if own.Status == models.NodeRemoved {
			return nil, errMoved // removed while we waited for the lock
		}
	}

	switch vm.Status {
	case models.VMRunning:
		// Rebooted in place (a pod's container recreated, /workspace
		// kept): it keeps what it holds, unless a GPU of it failed.
		if own != nil {
			if info, err = r.ownNode(own, false); err != nil {
				return nil, err
			}
			if st := placement.CheckRunning(r.req, info); st != nil {
				return nil, fromStatus(st)
			}
		}
		return r.finish(models.VMRunning, nil)

	case models.VMInterrupted:
		// Resumes on what it held once its node is back, and never on a
		// GPU that failed meanwhile.
		if info, err = r.ownNode(own, false); err != nil {
			return nil, err
		}
		if st := (placement.NodeOnline{}).Filter(r.req, info); st != nil {
			return nil, fromStatus(st)
		}
		if st := placement.CheckRunning(r.req, info); st != nil {
			return nil, fromStatus(st)
		}
		return r.finish(models.VMRunning, nil)

	case models.VMStopped, models.VMFailed:
		if vm.IsPod() && vm.TearingDown {
			return nil, podStopping(&vm)
		}
		// The fabric is locked only when an address is to be claimed.
		if info, err = r.ownNode(own, r.req.Pod && r.req.InfiniBand); err != nil {
			return nil, err
		}
		if st := r.fw.CheckOwnNode(r.req, info); st != nil {
			return nil, fromStatus(st)
		}
		if err := r.claimGPUs(info.ID, placement.PickGPUs(r.req, info)); err != nil {
			return nil, err
		}
		// An InfiniBand address is held by being a deploying pod on a
		// fabric node: the status written below is the claim, made under
		// the fabric lock the snapshot took (see the package comment).
		return r.finish(models.VMDeploying, nil)
	}
	return nil, fmt.Errorf("compute: VM %s has unknown status %q", vm.ID, vm.Status)
}

// lostNode reports whether a VM's disk (a pod's volume) is gone with its node.
func lostNode(vm *models.VM, own *models.Node) bool {
	return own == nil || own.Status == models.NodeRemoved || vm.StatusReason == ReasonNodeRemoved
}

// request builds placement's view of the VM: its GPU model and whether its
// organization wants InfiniBand.
func (r *restart) request(orgID string) error {
	vm := r.vm
	req := &placement.Request{
		VMID: vm.ID, Pod: vm.IsPod(), GPUCount: vm.GpuCount,
		CPUCores: vm.CPUCores, RAMGb: vm.RAMGb, DiskGb: vm.DiskSizeGb,
	}
	if vm.GpuModelID != nil {
		var m models.GpuModel
		if err := r.tx.Where("id = ?", *vm.GpuModelID).Take(&m).Error; err != nil {
			return err
		}
		r.model = &m
		req.GPUModel = placement.Model{ID: m.ID, Name: m.Name, Manufacturer: string(m.Manufacturer)}
	}
	var org models.Organization
	if err := r.tx.Where("id = ?", orgID).Take(&org).Error; err != nil {
		return err
	}
	req.InfiniBand = org.InfinibandEnabled
	r.req = req
	return nil
}

func (r *restart) snapshotter() *snapshotter {
	return &snapshotter{st: r.st, tx: r.tx, needIB: r.req.Pod && r.req.InfiniBand}
}

// ownNode loads the VM's own node, already locked by the caller.
func (r *restart) ownNode(own *models.Node, lockFabric bool) (*placement.NodeInfo, error) {
	if own == nil {
		return &placement.NodeInfo{}, nil
	}
	infos, err := r.snapshotter().load([]string{own.ID}, lockFabric)
	if err != nil {
		return nil, err
	}
	if len(infos) != 1 {
		return nil, errMoved
	}
	return infos[0], nil
}

// replace places a VM whose node is gone on a new node and deploys it fresh
// there.
func (r *restart) replace(old *models.Node) (*Result, error) {
	// Choose from a snapshot of every node read without locks…
	all, err := r.snapshotter().load(nil, false)
	if err != nil {
		return nil, err
	}
	p, st := r.fw.Place(r.req, all)
	if st != nil {
		return nil, fromStatus(st)
	}
	// …then lock the old node and the chosen one, by id, and check the
	// chosen one again on what the lock shows.
	lock := []string{p.Node.ID}
	if old != nil && old.ID != p.Node.ID {
		lock = append(lock, old.ID)
	}
	slices.Sort(lock)
	var locked []models.Node
	if err := r.st.ForUpdate(r.tx.Where("id IN ?", lock).Order("id")).Find(&locked).Error; err != nil {
		return nil, err
	}
	infos, err := r.snapshotter().load([]string{p.Node.ID}, r.req.Pod && r.req.InfiniBand)
	if err != nil {
		return nil, err
	}
	if len(infos) != 1 || r.fw.CheckOwnNode(r.req, infos[0]) != nil {
		return nil, errMoved
	}
	target := infos[0]
	if err := r.claimGPUs(target.ID, placement.PickGPUs(r.req, target)); err != nil {
		return nil, err
	}
	return r.finish(models.VMDeploying, &target.ID)
}

// claimGPUs makes the VM hold exactly the GPUs ids of node nodeID: it lets
// go of any other GPU it still holds, then takes these with a conditional
// UPDATE whose affected row count must match. A GPU that someone else holds,
// that failed, or that is not where the snapshot said rolls everything back.
func (r *restart) claimGPUs(nodeID string, ids []string) error {
	vmID := r.vm.ID
	release := r.tx.Model(&models.Gpu{}).Where("holder_vm_id = ?", vmID)
	if len(ids) > 0 {
		release = release.Where("id NOT IN ?", ids)
	}
	if err := release.Update("holder_vm_id", nil).Error; err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	modelID := ""
	if r.model != nil {
		modelID = r.model.ID
	}
	res := r.tx.Model(&models.Gpu{}).
		Where("id IN ? AND node_id = ? AND model_id = ? AND health = ? AND (holder_vm_id IS NULL OR holder_vm_id = ?)",
			ids, nodeID, modelID, models.GpuHealthy, vmID).
		Update("holder_vm_id", vmID)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != int64(len(ids)) {
		slog.Warn("GPU claim lost a race; replaying", "vm", vmID, "node", nodeID,
			"wanted", len(ids), "claimed", res.RowsAffected)
		return errMoved
	}
	return nil
}

// finish writes the new status and answers the VM as it is now.
func (r *restart) finish(status models.VMStatus, newNode *string) (*Result, error) {
	vm := r.vm
	set := map[string]any{
		"status":         status,
		"status_reason":  ReasonUserRestarted,
		"interrupted_at": nil,
		"updated_at":     r.now,
	}
	if newNode != nil {
		set["node_id"] = *newNode
		set["tearing_down"] = false
		vm.NodeID = newNode
		vm.TearingDown = false
	}
	if err := r.tx.Model(&models.VM{}).Where("id = ?", vm.ID).Updates(set).Error; err != nil {
		return nil, err
	}
	vm.Status, vm.StatusReason, vm.InterruptedAt, vm.UpdatedAt = status, ReasonUserRestarted, nil, r.now

	gpus := []*models.Gpu{} // never nil: VM.gpus is a non-null list
	if err := r.tx.Where("holder_vm_id = ?", vm.ID).Order("node_id, idx").Find(&gpus).Error; err != nil {
		return nil, err
	}
	return &Result{VM: vm, GPUs: gpus, Model: r.model}, nil
}
