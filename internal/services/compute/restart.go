package compute

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/services/quotas"
	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
)

// Service is restartVm for both faces.
type Service struct {
	store *store.Store
	// MaxPending is the most VMs and pods one organization may have
	// pending (--max-pending-per-org): a create that would queue one more
	// answers 409 PENDING_LIMIT_EXCEEDED. New sets DefaultMaxPending.
	MaxPending int
	// SpendLimitCentsPerHour is the platform's default spend limit of an
	// organization without one of its own (--spend-limit-cents-per-hour):
	// a create or restart that would take its spend an hour past it
	// answers 402 SPEND_LIMIT_EXCEEDED. 0 is none (New's).
	SpendLimitCentsPerHour int64
	// onChosen, set by tests only (SetChosenHook), runs after each create
	// chose its node and before it locks it.
	onChosen func(nodeID string)
	// reads shares a candidate read among the creates that want it at
	// once (candidateReads); nil shares none.
	reads *candidateReads
	// fleet is this replica's copy of every node's placement view, which a
	// create that nothing fits reads its refusal from (fleetCopy).
	fleet *fleetCopy
}

// New is the restart service over st.
func New(st *store.Store) *Service {
	return &Service{store: st, MaxPending: DefaultMaxPending, reads: &candidateReads{}, fleet: newFleetCopy(st)}
}

// Result is a VM after a successful restart, with what its answer shows
// besides its row.
type Result struct {
	VM    *models.VM
	GPUs  []*models.GPU    // the GPUs it holds now, lowest index first
	Model *models.GPUModel // its GPU model; nil on a CPU-only row
	// DiskGone: the restart placed the row afresh on another node, its
	// disk (a pod's volume) gone with the old one; Volume is the fresh one
	// it runs on there ("" for a row without a disk or volume).
	DiskGone bool
	Volume   string
}

// Warning is what the answer says besides the VM object when the restart
// placed the row afresh: the seed's "the disk is gone and a restart
// deploys fresh elsewhere", with where and on what; "" otherwise. REST
// sends it as a Warning header (299, as Kubernetes' API server warns), so
// the seed's body stays as it is.
func (r *Result) Warning() string {
	if !r.DiskGone || r.VM.NodeID == nil {
		return ""
	}
	if r.Volume == "" {
		return "the disk is gone: deployed fresh on node " + *r.VM.NodeID
	}
	return "the disk is gone: deployed fresh on node " + *r.VM.NodeID + " with a fresh, empty volume " + r.Volume
}

// maxReplays bounds how often a restart whose chosen node changed under it
// (see errMoved) starts over; engine-level races are replayed by store.Tx.
const maxReplays = 5

// Restart restarts the VM or pod id of the caller's organization, checking
// and claiming in one transaction. The caller must hold compute.operate.
// Every refusal is an *apierr.Error with the code, HTTP status and message
// of the contract.
func (s *Service) Restart(ctx context.Context, caller *auth.Caller, id string) (*Result, error) {
	if err := s.MayOperate(caller); err != nil {
		return nil, err
	}
	var res *Result
	var seen *models.VM
	var refused error // the refusal a preemption attempt answers when it finds no room
	for attempt := 1; ; attempt++ {
		err := s.store.InTx(ctx, func(tx *store.Txn) error {
			r := &restart{st: s.store, tx: tx, fw: placement.Default(), now: store.Now(), actor: caller.Actor(), spend: &s.SpendLimitCentsPerHour,
				refused: refused}
			var err error
			res, err = r.run(caller.OrganizationID, id)
			if r.vm != nil {
				seen = r.vm
			}
			return err
		})
		var np *needsPreemption
		switch {
		case err == nil:
			return res, nil
		case errors.As(err, &np) && refused == nil:
			// Start over in preemption mode, which locks its victims' rows
			// before any node (lock order).
			refused = np.refusal
			continue
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
	st    *store.Store
	tx    *store.Txn
	fw    *placement.Framework
	now   time.Time
	actor models.Actor

	vm    *models.VM
	model *models.GPUModel
	req   *placement.Request

	// refused, when set, is the refusal of an earlier attempt that a
	// reserved workload's preemption may overcome: this attempt preempts.
	refused error
	// spend, when set, is the default spend limit an owner's restart is
	// held to (the platform's own re-submits are not).
	spend *int64
}

func (r *restart) run(orgID, id string) (*Result, error) {
	// The VM row first: two restarts of one VM serialize here, and the
	// second then sees the first one's status.
	vm, err := r.st.LockVM(r.tx, orgID, id)
	if err != nil {
		return nil, err
	}
	if vm == nil {
		return nil, notFound(id)
	}
	r.vm = vm

	// The checks that need no node, in the contract's order.
	switch {
	case vm.ManagedBy == ManagedByServing:
		return nil, readOnly(vm)
	case vm.Status == models.VMTerminated:
		return nil, terminated(vm)
	case vm.Status == models.VMPending, vm.Status == models.VMDeploying:
		return nil, notReady(vm)
	}

	if err := r.request(orgID); err != nil {
		return nil, err
	}
	// A stopped or failed VM takes GPUs again: its organization's quota is
	// checked (and its row locked) after the VM row and before any node,
	// so a quota refusal answers before what the node would. A running or
	// interrupted one already counts against it and keeps what it holds.
	if vm.Status == models.VMStopped || vm.Status == models.VMFailed {
		if err := r.checkQuota(); err != nil {
			return nil, err
		}
	}

	var own *models.Node
	if vm.NodeID != nil {
		if own, err = r.st.Node(r.tx, *vm.NodeID); err != nil {
			return nil, err
		}
	}

	if r.refused != nil && r.canPreempt(own) {
		return r.preempt(own)
	}

	if lostNode(vm, own) && slices.Contains(models.Step(models.RestartReplace).From, vm.Status) {
		return r.replace(own)
	}

	// From here on the VM stays on its node: lock it, and decide on what the
	// lock shows.
	var info *placement.NodeInfo
	if own != nil {
		if err := r.st.LockNode(r.tx, own); err != nil {
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
				return nil, r.refusal(st)
			}
		}
		return r.finish(models.RestartReboot, nil)

	case models.VMInterrupted:
		// Resumes on what it held once its node is back, and never on a
		// GPU that failed meanwhile.
		if info, err = r.ownNode(own, false); err != nil {
			return nil, err
		}
		if st := (placement.NodeOnline{}).Filter(r.req, info); st != nil {
			return nil, r.refusal(st)
		}
		if st := placement.CheckRunning(r.req, info); st != nil {
			return nil, r.refusal(st)
		}
		return r.finish(models.RestartResume, nil)

	case models.VMStopped, models.VMFailed:
		if vm.IsPod() && vm.TearingDown {
			return nil, podStopping(vm)
		}
		if vmTearingDown(vm, own) {
			return nil, vmStopping(vm)
		}
		// The fabric is locked only when an address is to be claimed.
		if info, err = r.ownNode(own, r.req.Pod && r.req.InfiniBand); err != nil {
			return nil, err
		}
		if st := r.fw.CheckOwnNode(r.req, info); st != nil {
			return nil, r.refuseOrPreempt(st)
		}
		if err := r.claimGPUs(info.ID, placement.PickGPUs(r.req, info)); err != nil {
			return nil, err
		}
		// An InfiniBand address is held by being a deploying pod on a
		// fabric node: the status written below is the claim, made under
		// the fabric lock the snapshot took (see the package comment).
		return r.finish(models.RestartDeploy, nil)
	}
	return nil, fmt.Errorf("compute: VM %s has unknown status %q", vm.ID, vm.Status)
}

// checkQuota refuses a start that would take the organization past its
// GPU quota for the VM's model (quotas.Check, in this transaction).
func (r *restart) checkQuota() error {
	if r.model == nil {
		return nil
	}
	return quotas.Check(r.st, r.tx, quotas.Ask{OrganizationID: r.vm.OrganizationID, VMID: r.vm.ID,
		GPUModelID: r.model.ID, GPUs: r.vm.GPUCount})
}

// vmTearingDown reports whether a plain VM's previous run is still being
// torn down on its node: only a node an agent reports for tears anything
// down, so a fixture's flag elsewhere is no teardown (and its restart
// clears it).
func vmTearingDown(vm *models.VM, own *models.Node) bool {
	return !vm.IsPod() && vm.TearingDown && own != nil && own.AgentReportedAt != nil
}

// lostNode reports whether a VM's disk (a pod's volume) is gone with its node.
func lostNode(vm *models.VM, own *models.Node) bool {
	return own == nil || own.Status == models.NodeRemoved || vm.StatusReason == models.ReasonNodeRemoved
}

func (r *restart) refusal(st *placement.Status) error { return Refusal(st, r.req.Pod) }

// request builds placement's view of the VM: its GPU model and whether its
// organization wants InfiniBand.
func (r *restart) request(orgID string) error {
	vm := r.vm
	req := &placement.Request{
		VMID: vm.ID, OrganizationID: vm.OrganizationID, Pod: vm.IsPod(), GPUCount: vm.GPUCount,
		CPUCores: vm.CPUCores, RAMGb: vm.RAMGb, DiskGb: vm.DiskSizeGb,
	}
	if vm.GPUModelID != nil {
		m, err := r.st.GPUModel(r.tx, *vm.GPUModelID)
		if err != nil {
			return err
		}
		if m == nil { // the VM's foreign key says it exists
			return fmt.Errorf("compute: VM %s's GPU model %q is not in the catalog", vm.ID, *vm.GPUModelID)
		}
		r.model = m
		req.GPUModel = placement.Model{ID: m.ID, Name: m.Name, Manufacturer: string(m.Manufacturer)}
	}
	org, err := r.st.OrganizationToStart(r.tx, orgID)
	if err != nil {
		return err
	}
	// Read after the VM row's lock: an operator's state change, which locks
	// the organization's VM rows first, is either seen here or waits.
	if e := auth.OrganizationCannotStart(org.ID, org.State); e != nil {
		return e
	}
	// A running row's reboot starts nothing it did not run already.
	if r.spend != nil && vm.Status != models.VMRunning {
		if err := checkSpend(r.st, r.tx, org, vm.PricePerHourCents, *r.spend); err != nil {
			return err
		}
	}
	req.InfiniBand = org.InfinibandEnabled
	r.req = req
	return nil
}

// snapshot reads placement's view of the nodes ids (every node when nil).
func (r *restart) snapshot(ids []string, lockFabrics bool) ([]*placement.NodeInfo, error) {
	snap, err := r.st.Snapshot(r.tx, store.SnapshotScope{
		NodeIDs:        ids,
		LockFabrics:    lockFabrics,
		AddressHolders: r.req.Pod && r.req.InfiniBand,
		Workloads:      r.refused != nil,
	})
	if err != nil {
		return nil, err
	}
	return NodeInfos(snap), nil
}

// ownNode loads the VM's own node, already locked by the caller.
func (r *restart) ownNode(own *models.Node, lockFabric bool) (*placement.NodeInfo, error) {
	if own == nil {
		return &placement.NodeInfo{}, nil
	}
	infos, err := r.snapshot([]string{own.ID}, lockFabric)
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
	all, err := r.snapshot(nil, false)
	if err != nil {
		return nil, err
	}
	p, st := r.fw.Place(r.req, all)
	if st != nil {
		return nil, r.refuseOrPreempt(st)
	}
	// …then lock the old node and the chosen one, by id, and check the
	// chosen one again on what the lock shows.
	lock := []string{p.Node.ID}
	if old != nil && old.ID != p.Node.ID {
		lock = append(lock, old.ID)
	}
	slices.Sort(lock)
	if err := r.st.LockNodes(r.tx, lock); err != nil {
		return nil, err
	}
	infos, err := r.snapshot([]string{p.Node.ID}, r.req.Pod && r.req.InfiniBand)
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
	return r.finish(models.RestartReplace, &store.Move{NodeID: target.ID})
}

// claimGPUs makes the VM hold exactly the GPUs ids of node nodeID; a claim
// that lost a race is replayed.
func (r *restart) claimGPUs(nodeID string, ids []string) error {
	modelID := ""
	if r.model != nil {
		modelID = r.model.ID
	}
	err := r.st.ClaimGPUs(r.tx, r.vm.ID, nodeID, modelID, ids)
	if errors.Is(err, store.ErrClaimLost) {
		return errMoved
	}
	return err
}

// finish writes the lifecycle's transition name and answers the VM as it
// is now.
//
// Every restart but a resume starts a new run (deploying, or a reboot in
// place), so the row is scheduled again and the agent reports the stages
// of that run; a resume goes on with the run it had.
func (r *restart) finish(name models.TransitionName, move *store.Move) (*Result, error) {
	ch := store.Change{Transition: name, Actor: r.actor, Move: move}
	if name != models.RestartResume {
		ch.Stage = stageScheduled
	}
	ev, err := r.st.Apply(r.tx, r.vm, ch, r.now)
	if err != nil {
		return nil, err
	}
	gpus, err := r.st.HeldGPUs(r.tx, r.vm.ID)
	if err != nil {
		return nil, err
	}
	return &Result{VM: r.vm, GPUs: gpus, Model: r.model, DiskGone: move != nil, Volume: ev.VolumeID}, nil
}
