package httpapi_test

import (
	"context"
	"slices"
	"testing"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// Helpers of the stop, terminate, read, event and idempotency tests, over
// the restart tests' world.

// resetOps loads f after emptying what the lifecycle writes besides the
// world's tables: both event logs and the idempotency keys.
func resetOps(t testing.TB, st *store.Store, f *dataset.File) {
	t.Helper()
	for _, table := range []string{"vm_events", "node_events", "idempotency_keys"} {
		storetest.Exec(t, st, "DELETE FROM "+table)
	}
	resetWorld(t, st, f)
}

// eventsOf reads the event log of vmID, oldest first.
func eventsOf(t testing.TB, st *store.Store, vmID string) []models.VMEvent {
	t.Helper()
	var out []models.VMEvent
	storetest.Scan(t, st, &out, "SELECT * FROM vm_events WHERE vm_id = ? ORDER BY id", vmID)
	return out
}

// keyActor is the actor the event log names for the world's API key token.
func keyActor(token string) models.Actor {
	c := auth.Caller{KeyID: auth.HashToken(token)[:12]}
	return c.Actor()
}

// heldOn reads what the VMs on node hold there: host shares by VM, and the
// pods holding an address of its fabric.
func heldOn(t testing.TB, st *store.Store, node string) (shares, addresses []string) {
	t.Helper()
	err := st.InTx(context.Background(), func(tx *store.Txn) error {
		snap, err := st.Snapshot(tx, store.SnapshotScope{NodeIDs: []string{node}, AddressHolders: true})
		if err != nil {
			return err
		}
		for _, h := range snap.HostShares {
			shares = append(shares, h.ID)
		}
		for _, a := range snap.AddressHolders {
			addresses = append(addresses, a.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(shares)
	slices.Sort(addresses)
	return shares, addresses
}
