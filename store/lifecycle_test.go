package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gpugraph/dataset"
	"gpugraph/httpapi/servertest"
	"gpugraph/models"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// Apply writes what the lifecycle row says, lets go of what the row
// releases, appends one event, and refuses a transition the row's status
// does not allow, leaving nothing written.
func TestApplyWritesTheRowAndItsEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(servertest.Base)); err != nil {
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

// The sweep's transitions go through the same path: each row interrupted
// by a silent node has its event, by the sweep.
func TestSweepWritesEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(servertest.Base)); err != nil {
			t.Fatal(err)
		}
		now := store.Now()
		if err := st.DB.Exec("UPDATE nodes SET last_heartbeat_at = ? WHERE id = 'n1'", now.Add(-time.Hour)).Error; err != nil {
			t.Fatal(err)
		}
		res, err := st.Sweep(ctx, now, 30*time.Second)
		if err != nil || res.Interrupted != 3 {
			t.Fatalf("sweep: %+v %v", res, err)
		}
		for _, v := range []struct{ org, id string }{{"org-acme", "vm-acme-1"}, {"org-acme", "pod-acme-1"}, {"org-globex", "vm-globex-1"}} {
			evs, err := st.EventsAfter(ctx, v.org, []string{v.id}, 0, 10)
			if err != nil || len(evs) != 1 || evs[0].To != models.VMInterrupted || evs[0].ActorKind != models.ActorSweep ||
				evs[0].Reason != models.ReasonNodeLost {
				t.Errorf("%s: %v %+v", v.id, err, evs)
			}
		}
		if again, _ := st.Sweep(ctx, now, 30*time.Second); again.Changed() {
			t.Errorf("a second sweep of the same instant changed %+v", again)
		}
	})
}
