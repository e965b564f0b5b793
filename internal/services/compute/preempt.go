package compute

import (
	"slices"

	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
)

// Preemption: a reserved workload (computeClass) whose restart finds no
// room — its own node busy, no node for a fresh placement, or no free
// InfiniBand address — may stop interruptible workloads of other
// organizations on one node (placement's Preempt, a dry run) and start in
// their place, all in the restart's one transaction. The first attempt
// answers needsPreemption and is rolled back; the restart starts over and
// this attempt locks the victims' rows before any node row, keeping the
// lock order of internal/store/locks.go (VM rows, the quota row, nodes, fabrics).

// preemptingCodes are the refusals that stopping workloads can overcome.
var preemptingCodes = []placement.Code{placement.NodeBusy, placement.NoIPCapacity, placement.NoCapacity}

// needsPreemption says that a reserved workload was refused for want of
// room: the restart starts over and preempts, or answers refusal.
type needsPreemption struct{ refusal error }

func (e *needsPreemption) Error() string { return e.refusal.Error() }

// Unwrap lets a face that ever sees it answer the refusal itself.
func (e *needsPreemption) Unwrap() error { return e.refusal }

// refuseOrPreempt answers st, or asks for a preemption attempt when the
// workload is reserved and st is for want of room.
func (r *restart) refuseOrPreempt(st *placement.Status) error {
	err := r.refusal(st)
	if r.refused == nil && r.vm.ComputeClass == models.ComputeClassReserved && slices.Contains(preemptingCodes, st.Code) {
		return &needsPreemption{refusal: err}
	}
	return err
}

// canPreempt reports whether the VM, as this attempt found it, starts by
// placement (stopped or failed on its node, or placed afresh), the case
// the first attempt was refused in.
func (r *restart) canPreempt(own *models.Node) bool {
	vm := r.vm
	if vm.ComputeClass != models.ComputeClassReserved {
		return false
	}
	if lostNode(vm, own) {
		return slices.Contains(models.Step(models.RestartReplace).From, vm.Status)
	}
	return slices.Contains(models.Step(models.RestartDeploy).From, vm.Status)
}

// preemptionActor is who preemption's stops are by.
var preemptionActor = models.Actor{Kind: models.ActorPlatform, ID: "preemption"}

// preempt chooses a node and victims on a snapshot read without locks,
// locks the victims and the node, proves the fit again on what the locks
// show, stops the victims (models.SpotPreempted) and starts the VM there.
// With no node that preemption can free it answers the first refusal.
func (r *restart) preempt(own *models.Node) (*Result, error) {
	vm := r.vm
	lost := lostNode(vm, own)
	if !lost && vm.IsPod() && vm.TearingDown {
		return nil, podStopping(vm)
	}
	if !lost && vmTearingDown(vm, own) {
		return nil, vmStopping(vm)
	}
	var scope []string // every node for a fresh placement
	if !lost {
		scope = []string{own.ID}
	}
	infos, err := r.snapshot(scope, false)
	if err != nil {
		return nil, err
	}
	chosen, ok := r.fw.Preempt(r.req, infos)
	if !ok {
		return nil, r.refused
	}

	victims, err := r.st.LockVMsByIDs(r.tx, chosen.Victims)
	if err != nil {
		return nil, err
	}
	if len(victims) != len(chosen.Victims) {
		return nil, errMoved
	}
	lock := []string{chosen.Node.ID}
	if lost && own != nil && own.ID != chosen.Node.ID {
		lock = append(lock, own.ID)
	}
	slices.Sort(lock)
	if err := r.st.LockNodes(r.tx, lock); err != nil {
		return nil, err
	}
	locked, err := r.snapshot([]string{chosen.Node.ID}, r.req.Pod && r.req.InfiniBand)
	if err != nil {
		return nil, err
	}
	if len(locked) != 1 {
		return nil, errMoved
	}
	proof, ok := r.fw.Preempt(r.req, locked)
	if !ok || slices.ContainsFunc(proof.Victims, func(id string) bool { return !slices.Contains(chosen.Victims, id) }) {
		return nil, errMoved
	}

	var stopped []placement.Workload
	for _, v := range victims {
		if !slices.Contains(proof.Victims, v.ID) {
			continue
		}
		if _, err := r.st.Apply(r.tx, v, store.Change{Transition: models.SpotPreempted, Actor: preemptionActor, Handover: true}, r.now); err != nil {
			return nil, err
		}
		stopped = append(stopped, placement.Workload{VMID: v.ID})
	}
	target := placement.Without(locked[0], stopped)
	if r.fw.CheckOwnNode(r.req, target) != nil {
		return nil, errMoved
	}
	if err := r.claimGPUs(target.ID, placement.PickGPUs(r.req, target)); err != nil {
		return nil, err
	}
	if lost {
		return r.finish(models.RestartReplace, &store.Move{NodeID: target.ID})
	}
	return r.finish(models.RestartDeploy, nil)
}
