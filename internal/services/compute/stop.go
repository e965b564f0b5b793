package compute

import (
	"context"
	"fmt"
	"net/http"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The codes stop and terminate answer besides restart's (VM_NOT_FOUND,
// VM_READ_ONLY, VM_TERMINATED).
const (
	// CodeVMNotRunning: a stop of a row that runs nothing (stopped,
	// failed, pending).
	CodeVMNotRunning = "VM_NOT_RUNNING"
)

// Stop stops the VM or pod id of the caller's organization (the lifecycle's
// user-stop): its GPUs, host share and address are released — once its
// node's agent reports it gone, tearingDown until then — and its disk or
// volume stays on its node. The caller must hold compute.operate.
func (s *Service) Stop(ctx context.Context, caller *auth.Caller, id string) (*Result, error) {
	return s.end(ctx, caller, id, models.UserStop)
}

// Terminate terminates the VM or pod id of the caller's organization (the
// lifecycle's user-terminate): everything it held is released (after its
// teardown, as Stop's) and its disk is gone. The caller must hold
// compute.operate.
func (s *Service) Terminate(ctx context.Context, caller *auth.Caller, id string) (*Result, error) {
	return s.end(ctx, caller, id, models.UserTerminate)
}

// end applies a user's stop or terminate to one locked row. The row lock
// serializes it with restarts and agent reports of the same row: whichever
// comes second sees the first one's status.
func (s *Service) end(ctx context.Context, caller *auth.Caller, id string, name models.TransitionName) (*Result, error) {
	if err := s.MayOperate(caller); err != nil {
		return nil, err
	}
	var res *Result
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		vm, err := s.store.LockVM(tx, caller.OrganizationID, id)
		if err != nil {
			return err
		}
		if vm == nil {
			return notFound(id)
		}
		if vm.ManagedBy == ManagedByServing {
			return readOnlyFor(vm, verbOf(name))
		}
		if t := models.Step(name); !t.Allows(vm) {
			return refusedEnd(vm, name)
		}
		if _, err := s.store.Apply(tx, vm, store.Change{Transition: name, Actor: caller.Actor()}, store.Now()); err != nil {
			return err
		}
		// What it holds now: nothing, or its GPUs while its node tears
		// it down.
		gpus, err := s.store.HeldGPUs(tx, vm.ID)
		if err != nil {
			return err
		}
		res = &Result{VM: vm, GPUs: gpus}
		if vm.GPUModelID != nil {
			if res.Model, err = s.store.GPUModel(tx, *vm.GPUModelID); err != nil {
				return err
			}
			if res.Model == nil { // the VM's foreign key says it exists
				return fmt.Errorf("compute: VM %s's GPU model %q is not in the catalog", vm.ID, *vm.GPUModelID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func verbOf(name models.TransitionName) string {
	if name == models.UserTerminate {
		return "terminate"
	}
	return "stop"
}

func readOnlyFor(vm *models.VM, verb string) error {
	return apierr.New(http.StatusForbidden, CodeVMReadOnly,
		"%s %s is an inference serving replica (managedBy %q) and is read-only here; %s it through the serving deployment that owns it",
		kind(vm), vm.ID, vm.ManagedBy, verb)
}

// refusedEnd is the 409 of a stop or terminate the row's status does not
// allow: a terminated row is VM_TERMINATED for both; a stop of a row that
// runs nothing is VM_NOT_RUNNING.
func refusedEnd(vm *models.VM, name models.TransitionName) error {
	if vm.Status == models.VMTerminated {
		return apierr.Conflict(CodeVMTerminated, "%s %s is already terminated", kind(vm), vm.ID)
	}
	msg := "there is nothing to " + verbOf(name)
	switch vm.Status {
	case models.VMStopped:
		msg = "is already stopped"
	case models.VMFailed:
		msg = "failed and runs nothing; " + msg
	case models.VMPending:
		msg = "is pending (queued, not placed yet), so there is nothing to stop; terminate it to cancel it"
	default:
		msg = "is " + string(vm.Status) + "; " + msg
	}
	return apierr.Conflict(CodeVMNotRunning, "%s %s %s", kind(vm), vm.ID, msg)
}
