package compute

import (
	"errors"
	"net/http"

	"gpugraph/internal/lib/apierr"
	"gpugraph/models"
	"gpugraph/placement"
)

// ManagedByServing is the managedBy of an inference serving replica, which
// restartVm refuses to touch.
const ManagedByServing = "serving"

// errMoved says that a node changed between the unlocked snapshot a
// placement was chosen from and the locked reload: a restart's transaction
// is rolled back and replayed with a fresh snapshot; a create lets the node
// go and tries the next candidate (internal/services/compute/create.go).
var errMoved = errors.New("compute: the snapshot changed under the lock")

// errClaimed says that another transaction holds the lock of the node a
// create chose (store.SnapshotScope.SkipLocked): it is passed over, not
// waited on.
var errClaimed = errors.New("compute: another transaction is claiming the node")

// errRefused says that a candidate a create locked fails a filter under its
// lock (one the database does not run, as the agent's version, or the node
// changed since the candidates were read): it is passed over, as Place
// passes over a node its filters reject.
var errRefused = errors.New("compute: the candidate fails a filter under its lock")

func kind(vm *models.VM) string {
	if vm.IsPod() {
		return "pod"
	}
	return "VM"
}

func notFound(id string) error {
	return apierr.NotFound(CodeVMNotFound, "there is no VM or pod %q in your organization", id)
}

func readOnly(vm *models.VM) error {
	return apierr.New(http.StatusForbidden, CodeVMReadOnly,
		"%s %s is an inference serving replica (managedBy %q) and is read-only here; restart it through the serving deployment that owns it",
		kind(vm), vm.ID, vm.ManagedBy)
}

func terminated(vm *models.VM) error {
	return apierr.New(http.StatusConflict, CodeVMTerminated,
		"%s %s is terminated and cannot be restarted; create a new one", kind(vm), vm.ID)
}

func notReady(vm *models.VM) error {
	what := "is still deploying"
	if vm.Status == models.VMPending {
		what = "is pending (queued, not placed yet)"
	}
	return apierr.New(http.StatusConflict, CodeVMNotReady,
		"%s %s %s; restart it once it is running", kind(vm), vm.ID, what)
}

func podStopping(vm *models.VM) error {
	return apierr.New(http.StatusConflict, CodePodStopping,
		"pod %s is still tearing down its previous run; try again once it has stopped", vm.ID)
}

// vmStopping is a plain VM's POD_STOPPING: the contract names no code of
// its own for it, and a VM whose last run is still shutting down is not
// ready to restart, as a deploying one is not.
func vmStopping(vm *models.VM) error {
	return apierr.New(http.StatusConflict, CodeVMNotReady,
		"VM %s is still shutting down its previous run on its node; restart it once it has stopped", vm.ID)
}

// busy is the answer when the transaction kept losing races: the node is
// too contended to decide now.
func busy(vm *models.VM) error {
	code := Answers[placement.NodeBusy].APICode(vm != nil && vm.IsPod())
	e := apierr.New(http.StatusServiceUnavailable, code,
		"the node changed while this restart was being decided (other restarts are claiming it); try again in a few seconds")
	e.RetryAfter = 5
	return e
}
