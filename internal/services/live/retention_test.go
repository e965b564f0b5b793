package live_test

import (
	"context"
	"testing"
	"time"

	"gpugraph/internal/services/live"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// A retention runner deletes, when it starts, the VM and node events older
// than its retention and keeps the others; with retention 0 it keeps
// everything and returns at once.
func TestRetentionDeletesExpiredEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		now := store.Now()
		old, recent := now.Add(-8*24*time.Hour), now.Add(-time.Hour)
		for i, at := range []time.Time{old, recent} {
			ev := &models.VMEvent{Seq: int64(i + 1), VMID: "vm", OrganizationID: "o", From: models.VMRunning, To: models.VMStopped,
				Transition: models.UserStop, ActorKind: models.ActorUser, At: at}
			nev := &models.NodeEvent{NodeID: "n", Kind: models.NodeEventStatus, ActorKind: models.ActorSweep, At: at}
			storetest.Insert(t, st, ev)
			storetest.Insert(t, st, nev)
		}
		count := func() (vm, node int64) {
			vm = storetest.Count(t, st, "vm_events", "")
			node = storetest.Count(t, st, "node_events", "")
			return vm, node
		}

		live.NewRetention(st, 0, time.Hour).Run(context.Background()) // returns at once
		if vm, node := count(); vm != 2 || node != 2 {
			t.Fatalf("retention 0 deleted events: %d VM and %d node events left", vm, node)
		}

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			live.NewRetention(st, live.DefaultEventRetention, time.Hour).Run(ctx)
		}()
		deadline := time.Now().Add(10 * time.Second)
		for vm, node := count(); vm != 1 || node != 1; vm, node = count() {
			if time.Now().After(deadline) {
				t.Fatalf("after 10s, %d VM and %d node events left, want 1 and 1", vm, node)
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		<-done
		var kept models.VMEvent
		storetest.Take(t, st, &kept, "vm_events", "")
		if !kept.At.Equal(recent) {
			t.Errorf("kept %+v; want the recent event", kept)
		}
	})
}
