package store_test

import (
	"context"
	"errors"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// Apply writes what the lifecycle row says, lets go of what the row
// releases, appends one event, and refuses a transition the row's status
// does not allow, leaving nothing written.
func TestApplyWritesTheRowAndItsEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(datasettest.Base)); err != nil {
			t.Fatal(err)
		}
		now := store.Now()
		user := models.Actor{Kind: models.ActorUser, ID: "key:abc"}
		err := st.InTx(ctx, func(tx *store.Txn) error {
			vm, err := st.LockVM(tx, "org-acme", "vm-acme-1")
			if err != nil {
				return err
			}
			ev, err := st.Apply(tx, vm, store.Change{Transition: models.UserStop, Actor: user}, now)
			if err != nil {
				return err
			}
			if vm.Status != models.VMStopped || vm.StatusReason != models.ReasonUserStopped || ev.From != models.VMRunning {
				t.Errorf("after stop: %s %q, event from %s", vm.Status, vm.StatusReason, ev.From)
			}
			_, err = st.Apply(tx, vm, store.Change{Transition: models.AgentRunning, Actor: user}, now)
			if !errors.Is(err, store.ErrTransitionNotAllowed) {
				t.Errorf("agent-running on a stopped VM: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var held int64
		st.DB.Table("gpus").Where("holder_vm_id = ?", "vm-acme-1").Count(&held)
		if held != 0 {
			t.Errorf("a stopped VM still holds %d GPUs", held)
		}
		evs, err := st.EventsAfter(ctx, "org-acme", []string{"vm-acme-1"}, 0, 10)
		if err != nil || len(evs) != 1 {
			t.Fatalf("events: %v %+v", err, evs)
		}
		e := evs[0]
		if e.From != models.VMRunning || e.To != models.VMStopped || e.Reason != models.ReasonUserStopped ||
			e.Transition != models.UserStop || e.ActorKind != models.ActorUser || e.ActorID != "key:abc" || !e.At.Equal(now) {
			t.Errorf("event: %+v", e)
		}
		if other, _ := st.EventsAfter(ctx, "org-globex", []string{"vm-acme-1"}, 0, 10); len(other) != 0 {
			t.Errorf("another organization reads %d events", len(other))
		}
	})
}
