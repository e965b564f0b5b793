package httpapi_test

import (
	"context"
	"slices"
	"testing"

	"gpugraph/internal/store"
)

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
