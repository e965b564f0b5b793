package nodes

import (
	"context"
	"slices"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// What each report costs the database, statement by statement, pinned per
// engine (PostgreSQL adds the node log's advisory lock and the NOTIFYs):
// moving the decisions out of the store changed none of them, and a
// change that adds one shows here. Writing the event logs at the
// transaction's tail (decision 0047) took off the busy heartbeat's second
// insert of VM events and counter draw, and on PostgreSQL the log lock and
// the separate NOTIFY of each VM event append. (A row reported running marks its
// volume as holding data: one UPDATE in the busy heartbeat.)
func TestReportStatements(t *testing.T) {
	want := map[store.Dialect][]int64{
		//                new node, reconciled, same again, busy heartbeat, idle heartbeat, stale heartbeat
		store.SQLite:   {12, 21, 8, 15, 7, 4},
		store.Postgres: {14, 23, 8, 17, 7, 4},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		count := storetest.CountStatements(t, st)
		datasettest.Load(t, st, reconcileFixture)
		svc := service(st)
		var got []int64
		run := func(what string, fn func() error) {
			t.Helper()
			var err error
			got = append(got, count.During(func() { err = fn() }))
			if err != nil && what != "stale heartbeat" {
				t.Fatalf("%s: %v", what, err)
			}
		}
		run("a new node with GPUs of a new model", func() error {
			_, err := svc.register(ctx, inventory{NodeName: "fresh", AgentVersion: "2.6.1", Sequence: 1,
				GPUs: []inventoryGPU{h100(0, "GPU-q1"), {Index: 1, UUID: "GPU-q2", Name: "AMD Instinct MI300X", Health: models.GPUHealthy}}}, t0)
			return err
		})
		failed := h100(2, "GPU-e")
		failed.Health = models.GPUFailed
		known := inventory{NodeName: "dgx-01", AgentVersion: "2.6.1", CPUCores: 224, Sequence: 1,
			GPUs: []inventoryGPU{h100(0, "GPU-a"), h100(1, "GPU-c"), failed, h100(3, "GPU-d")}}
		run("a known node reconciled", func() error { _, err := svc.register(ctx, known, t0); return err })
		known.Sequence = 2
		run("the same inventory again", func() error { _, err := svc.register(ctx, known, t0); return err })

		storetest.Exec(t, st, "UPDATE nodes SET status = 'offline' WHERE id = 'n1'")
		storetest.Exec(t, st, "UPDATE vms SET status = 'interrupted', status_reason = 'node_lost', interrupted_at = ? WHERE id = 'vm1'", t0)
		storetest.Exec(t, st, "UPDATE vms SET status = 'deploying', status_reason = '' WHERE id = 'vm2'")
		var gen int
		storetest.Scan(t, st, &gen, "SELECT generation FROM vms WHERE id = 'vm2'")
		run("a heartbeat that resumes, moves a row and fails a GPU", func() error {
			_, err := svc.recordHeartbeat(ctx, heartbeat{NodeName: "dgx-01", Sequence: 3, GPUs: []heartbeatGPU{
				{UUID: "GPU-a", Health: models.GPUHealthy, Utilization: 87},
				{UUID: "GPU-d", Health: models.GPUFailed, FailedReason: "XID 79"}},
				Workloads: []workloadReport{{ID: "vm2", Generation: gen, State: "running"}, {ID: "nope", State: "running"}}}, t0.Add(time.Second))
			return err
		})
		run("an idle heartbeat", func() error {
			_, err := svc.recordHeartbeat(ctx, heartbeat{NodeName: "dgx-01", Sequence: 4, GPUs: []heartbeatGPU{
				{UUID: "GPU-a", Health: models.GPUHealthy, Utilization: 87}}}, t0.Add(2*time.Second))
			return err
		})
		run("stale heartbeat", func() error {
			_, err := svc.recordHeartbeat(ctx, heartbeat{NodeName: "dgx-01", Sequence: 4}, t0.Add(3*time.Second))
			if err == nil {
				t.Error("a stale heartbeat was accepted")
			}
			return err
		})
		if w := want[st.Dialect]; !slices.Equal(got, w) {
			t.Errorf("statements %v, want %v", got, w)
		}
	})
}
