package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// VolumesOfVMs answers the live volume of each of the organization's rows
// asked for, a pod's mounted at /workspace: none for another
// organization's row, a terminated row (its volume deleted) or a row the
// API no longer shows.
func TestVolumesOfVMsAreTheOrganizationsLiveOnes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(datasettest.Base)); err != nil {
			t.Fatal(err)
		}
		ids := []string{"vm-acme-1", "vm-acme-2", "pod-acme-1", "vm-globex-1", "vm-none"}
		read := func() []string {
			t.Helper()
			vs, err := st.VolumesOfVMs(ctx, "org-acme", ids)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, v := range vs {
				mount := "-"
				if v.MountPath != nil {
					mount = *v.MountPath
				}
				out = append(out, fmt.Sprintf("%s %s %s %s %dGB %s fresh=%v made=%v", v.ID, v.OrganizationID, v.VMID, v.NodeID, v.SizeGb, mount, v.Fresh, !v.CreatedAt.IsZero()))
			}
			slices.Sort(out)
			return out
		}
		want := []string{
			"vol-pod-acme-1-0 org-acme pod-acme-1 n1 100GB /workspace fresh=false made=true",
			"vol-vm-acme-1-0 org-acme vm-acme-1 n1 500GB - fresh=false made=true",
			"vol-vm-acme-2-0 org-acme vm-acme-2 n1 200GB - fresh=false made=true",
		}
		if got := read(); !slices.Equal(got, want) {
			t.Fatalf("acme's volumes:\n  %v\nwant\n  %v", got, want)
		}

		// A terminate deletes the row's volume.
		err := st.InTx(ctx, func(tx *store.Txn) error {
			vm, err := st.LockVM(tx, "org-acme", "vm-acme-2")
			if err != nil {
				return err
			}
			_, err = st.Apply(tx, vm, store.Change{Transition: models.UserTerminate, Actor: models.Actor{Kind: models.ActorUser, ID: "key:t"}}, store.Now())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// A row the API no longer shows answers none, whatever its volume.
		if err := st.DB.Exec("UPDATE vms SET deleted_at = ? WHERE id = ?", store.Now(), "pod-acme-1").Error; err != nil {
			t.Fatal(err)
		}
		if got := read(); !slices.Equal(got, want[1:2]) {
			t.Errorf("acme's volumes after a terminate and a deleted row:\n  %v\nwant\n  %v", got, want[1:2])
		}
	})
}
