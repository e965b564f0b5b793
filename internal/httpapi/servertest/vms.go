package servertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// ReadVM reads one VM's row as the store has it (the lifecycle columns
// too), failing when there is none.
func ReadVM(t testing.TB, st *store.Store, id string) *models.VM {
	t.Helper()
	var vm models.VM
	storetest.Scan(t, st, &vm, "SELECT * FROM vms WHERE id = ?", id)
	if vm.ID != id {
		t.Fatalf("no VM %s", id)
	}
	return &vm
}

// WaitVM polls VM id until it is in status want (and every extra check
// holds), for at most 20s; a failure shows what output answers (an
// agent's log), when it is not nil.
func WaitVM(t testing.TB, st *store.Store, output func() string, id string, want models.VMStatus, extra ...func(*models.VM) bool) *models.VM {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		vm := ReadVM(t, st, id)
		ok := vm.Status == want
		for _, f := range extra {
			ok = ok && f(vm)
		}
		if ok {
			return vm
		}
		if time.Now().After(deadline) {
			out := ""
			if output != nil {
				out = output()
			}
			t.Fatalf("waited 20s for %s to be %s; it is %s (%q, generation %d)\nagent output:\n%s", id, want, vm.Status, vm.StatusReason, vm.Generation, out)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// CheckVM checks a row's statusReason and how many GPUs it holds.
func CheckVM(t testing.TB, st *store.Store, vm *models.VM, reason string, gpus int) {
	t.Helper()
	if vm.StatusReason != reason {
		t.Errorf("%s: statusReason %q, want %q", vm.ID, vm.StatusReason, reason)
	}
	if held := HeldGPUs(t, st, vm.ID); held != int64(gpus) {
		t.Errorf("%s (%s) holds %d GPUs, want %d", vm.ID, vm.Status, held, gpus)
	}
}

// HeldGPUs is how many GPUs VM id holds.
func HeldGPUs(t testing.TB, st *store.Store, id string) int64 {
	t.Helper()
	return storetest.Count(t, st, "gpus", "holder_vm_id = ?", id)
}

// CheckEvents checks that a VM's events end with want, each written
// "transition:from>to:actorKind:actorID"; a trailing * matches any rest.
// The stages a starting run walks (agent-stage) are left out: only the
// status moves count.
func CheckEvents(t testing.TB, st *store.Store, id string, want ...string) {
	t.Helper()
	vm := ReadVM(t, st, id)
	evs, err := st.EventsAfter(context.Background(), vm.OrganizationID, []string{id}, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.Transition == models.AgentStage {
			continue
		}
		got = append(got, fmt.Sprintf("%s:%s>%s:%s:%s", e.Transition, e.From, e.To, e.ActorKind, e.ActorID))
	}
	ok := len(got) >= len(want)
	for i := 0; ok && i < len(want); i++ {
		g, w := got[len(got)-len(want)+i], want[i]
		ok = g == w || strings.HasSuffix(w, "*") && strings.HasPrefix(g, strings.TrimSuffix(w, "*"))
	}
	if !ok {
		t.Errorf("%s: events\n  %s\nwant them to end with\n  %s", id, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
