package store_test

import (
	"context"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// applyAt applies transition name to org-acme's VM id at at.
func applyAt(t *testing.T, st *store.Store, id string, name models.TransitionName, at time.Time) *models.VMEvent {
	t.Helper()
	var ev *models.VMEvent
	err := st.InTx(context.Background(), func(tx *store.Txn) error {
		vm, err := st.LockVM(tx, "org-acme", id)
		if err != nil {
			return err
		}
		ev, err = st.Apply(tx, vm, store.Change{Transition: name, Actor: models.Actor{Kind: models.ActorUser}}, at)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// Every transition's event records what metering bills from it: the row's
// price after it, and the disk it keeps where it is stopped after it; one
// transition of many rows (an operator's) records them too.
func TestEventsRecordThePriceAndTheStorageKept(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := store.Now()
		stop := applyAt(t, st, "vm-acme-1", models.UserStop, now)
		deploy := applyAt(t, st, "vm-acme-1", models.RestartDeploy, now)
		if stop.PricePerHourCents == nil || *stop.PricePerHourCents != 450 || stop.StorageGb != 500 {
			t.Errorf("stop: price %v, storage %d GB; want 450, 500", stop.PricePerHourCents, stop.StorageGb)
		}
		if deploy.PricePerHourCents == nil || *deploy.PricePerHourCents != 450 || deploy.StorageGb != 0 {
			t.Errorf("restart: price %v, storage %d GB; want 450, 0", deploy.PricePerHourCents, deploy.StorageGb)
		}
		err := st.InTx(ctx, func(tx *store.Txn) error {
			_, err := st.ApplyToWorkloads(tx, store.Workloads{OrganizationID: "org-globex"},
				store.Change{Transition: models.OrgSuspended, Actor: models.Actor{Kind: models.ActorOperator}}, now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var evs []models.VMEvent
		st.DB.Where("vm_id = ?", "vm-globex-1").Find(&evs)
		if len(evs) != 1 || evs[0].StorageGb != 1000 || evs[0].PricePerHourCents == nil {
			t.Errorf("suspended: %+v", evs)
		}
		// Read back from the log as written.
		var back models.VMEvent
		st.DB.Take(&back, "id = ?", stop.ID)
		if back.PricePerHourCents == nil || *back.PricePerHourCents != 450 || back.StorageGb != 500 {
			t.Errorf("stop, read back: %v %d", back.PricePerHourCents, back.StorageGb)
		}
	})
}

// Retention deletes no event a metering cursor has not applied yet: the
// usage it starts is closed first.
func TestRetentionKeepsWhatMeteringHasNotApplied(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		then := store.Now().Add(-48 * time.Hour)
		a := applyAt(t, st, "vm-acme-1", models.UserStop, then)
		b := applyAt(t, st, "vm-acme-2", models.UserTerminate, then)
		c := applyAt(t, st, "pod-acme-1", models.UserTerminate, then)
		err := st.InTx(ctx, func(tx *store.Txn) error {
			return st.CreateCursors(tx, []models.UsageCursor{
				{VMID: "vm-acme-1", OrganizationID: "org-acme", Through: then, LastEventID: a.ID - 1, Status: models.VMRunning},
				{VMID: "vm-acme-2", OrganizationID: "org-acme", Through: then, LastEventID: b.ID, Status: models.VMTerminated},
				// Finished before its last event: nothing more is applied.
				{VMID: "pod-acme-1", OrganizationID: "org-acme", Through: then, LastEventID: c.ID - 1,
					Status: models.VMTerminated, Done: true}})
		})
		if err != nil {
			t.Fatal(err)
		}
		n, err := st.DeleteEventsBefore(ctx, store.Now().Add(-time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("deleted %d, %v; want 2 (vm-acme-2's, applied, and pod-acme-1's, finished)", n, err)
		}
		var left []int64
		st.DB.Table("vm_events").Order("id").Pluck("id", &left)
		if len(left) != 1 || left[0] != a.ID {
			t.Errorf("kept %v; want [%d]", left, a.ID)
		}
	})
}

// A usage record of a workload, kind and period start is written once: a
// second insert of the key writes nothing and answers nothing written.
func TestAUsageRecordIsWrittenOnce(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
		rec := func(ms int64) *models.UsageRecord {
			return &models.UsageRecord{OrganizationID: "org-acme", VMID: "vm-acme-1", Kind: models.UsageCompute,
				PeriodStart: at, PeriodEnd: at.Add(time.Minute), Day: "2026-12-03", Milliseconds: ms, ClosedAt: at}
		}
		for i, want := range []int{1, 0} {
			var n int
			err := st.InTx(context.Background(), func(tx *store.Txn) error {
				w, err := st.InsertUsage(tx, []*models.UsageRecord{rec(int64(1000 * (i + 1)))})
				n = len(w)
				return err
			})
			if err != nil || n != want {
				t.Fatalf("insert %d: %d written, %v; want %d", i, n, err, want)
			}
		}
		recs, _ := st.UsageRecordsOf(context.Background(), "vm-acme-1")
		if len(recs) != 1 || recs[0].Milliseconds != 1000 {
			t.Errorf("records: %+v", recs)
		}
	})
}
