package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/sqlcount"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func node(t *testing.T, st *store.Store, id string) models.Node {
	t.Helper()
	var n models.Node
	if err := st.DB.Take(&n, "id = ?", id).Error; err != nil {
		t.Fatalf("node %s: %v", id, err)
	}
	return n
}

// inTx runs fn in one transaction and fails the test on its error.
func inTx(t *testing.T, st *store.Store, fn func(tx *store.Txn) error) {
	t.Helper()
	if err := st.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

const primitivesFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o", "name": "O", "tenantId": 1}],
 "nodes": [
  {"id": "n1", "name": "dgx-01", "clusterId": "c1", "status": "offline", "agentVersion": "2.4.0", "cpuCores": 100, "ramGb": 1000, "diskGb": 5000,
   "lastHeartbeatAt": "2025-03-01T11:00:00Z",
   "gpus": [{"id": "g0", "index": 0, "uuid": "GPU-a", "address": "0000:18:00.0", "modelId": "h100"},
            {"id": "g1", "index": 1, "uuid": "GPU-b", "address": "0000:2A:00.0", "modelId": "h100"}]}],
 "vms": [
  {"id": "a-lost", "name": "a", "organizationId": "o", "nodeId": "n1", "status": "interrupted", "statusReason": "node_lost",
   "interruptedAt": "2025-02-01T00:00:00Z", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["g0"]},
  {"id": "b-lost-late", "name": "b", "organizationId": "o", "nodeId": "n1", "status": "interrupted", "statusReason": "node_lost",
   "interruptedAt": "2025-03-01T11:30:00Z"},
  {"id": "c-spot", "name": "c", "organizationId": "o", "nodeId": "n1", "status": "interrupted", "statusReason": "spot_preempted_for_reservation_tenant",
   "interruptedAt": "2025-02-01T00:00:00Z"},
  {"id": "d-undated", "name": "d", "organizationId": "o", "nodeId": "n1", "status": "interrupted", "statusReason": "node_lost"},
  {"id": "e-running", "name": "e", "organizationId": "o", "nodeId": "n1", "status": "running", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["g1"]}]
}`

// A report's sequence advances only upwards; a refusal reads the last one
// and writes nothing.
func TestAdvanceReportSequence(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		datasettest.Load(t, st, primitivesFixture)
		type step struct {
			advanced bool
			last     int64
		}
		var got []step
		inTx(t, st, func(tx *store.Txn) error {
			for _, seq := range []int64{5, 5, 3, 6} {
				advanced, last, err := st.AdvanceReportSequence(tx, "n1", seq)
				if err != nil {
					return err
				}
				got = append(got, step{advanced, last})
			}
			return nil
		})
		if want := []step{{true, 5}, {false, 5}, {false, 5}, {true, 6}}; !reflect.DeepEqual(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		var err error
		_ = st.InTx(context.Background(), func(tx *store.Txn) error {
			_, _, err = st.AdvanceReportSequence(tx, "nope", 1)
			return nil
		})
		if err == nil {
			t.Error("advancing the sequence of no node succeeded")
		}
	})
}

// UpdateNode writes the heartbeat instant always and every other field
// only when it is set.
func TestUpdateNodeWritesWhatIsSet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		datasettest.Load(t, st, primitivesFixture)
		inTx(t, st, func(tx *store.Txn) error { return st.UpdateNode(tx, "n1", store.NodeUpdate{LastHeartbeatAt: t0}) })
		n := node(t, st, "n1")
		if n.Status != models.NodeOffline || n.AgentVersion != "2.4.0" || n.ClusterID != "c1" || n.CPUCores != 100 || n.RAMGb != 1000 ||
			n.DiskGb != 5000 || !n.LastHeartbeatAt.Equal(t0) {
			t.Errorf("a bare update changed more than the heartbeat: %+v", n)
		}
		inTx(t, st, func(tx *store.Txn) error {
			return st.UpdateNode(tx, "n1", store.NodeUpdate{LastHeartbeatAt: t0.Add(time.Second), Status: models.NodeOnline,
				AgentVersion: "2.6.1", ClusterID: "c2", CPUCores: 1, RAMGb: 2, DiskGb: 3})
		})
		n = node(t, st, "n1")
		if n.Status != models.NodeOnline || n.AgentVersion != "2.6.1" || n.ClusterID != "c2" || n.CPUCores != 1 || n.RAMGb != 2 ||
			n.DiskGb != 3 || !n.LastHeartbeatAt.Equal(t0.Add(time.Second)) {
			t.Errorf("a full update: %+v", n)
		}
	})
}

// UpdateGPU writes the fields set, index 0 included, in one statement,
// and nothing for an empty update; FailGPU fails a healthy GPU only.
func TestGPUWrites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		datasettest.Load(t, st, primitivesFixture)
		count, err := sqlcount.Register(st.DB)
		if err != nil {
			t.Fatal(err)
		}
		zero := 0
		var failed []bool
		inTx(t, st, func(tx *store.Txn) error {
			if n := count.During(func() { err = st.UpdateGPU(tx, "g0", store.GPUUpdate{}) }); err != nil || n != 0 {
				return fmt.Errorf("an empty update: %d statements, %v", n, err)
			}
			if err := st.SetGPUIndex(tx, "g0", -1); err != nil {
				return err
			}
			if err := st.SetGPUIndex(tx, "g1", 0); err != nil {
				return err
			}
			if n := count.During(func() {
				err = st.UpdateGPU(tx, "g1", store.GPUUpdate{Address: "0000:1B:00.0", Index: &zero})
			}); err != nil || n != 1 {
				return fmt.Errorf("an update: %d statements, %v", n, err)
			}
			for _, id := range []string{"g0", "g0"} {
				f, err := st.FailGPU(tx, id, "XID 79")
				if err != nil {
					return err
				}
				failed = append(failed, f)
			}
			return nil
		})
		if !reflect.DeepEqual(failed, []bool{true, false}) {
			t.Errorf("FailGPU answered %v, want a failure once", failed)
		}
		var gs []models.GPU
		st.DB.Order("id").Find(&gs)
		if g := gs[0]; g.Index != -1 || g.Health != models.GPUFailed || g.FailedReason == nil || *g.FailedReason != "XID 79" {
			t.Errorf("g0 = %+v", g)
		}
		if g := gs[1]; g.Index != 0 || g.Address != "0000:1B:00.0" || g.UUID != "GPU-b" || g.Health != models.GPUHealthy {
			t.Errorf("g1 = %+v", g)
		}
	})
}

// Workloads' selections: the exact statusReason, an interruption or a
// status older than an instant, a bound; deleted rows never.
func TestWorkloadsSelections(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		datasettest.Load(t, st, primitivesFixture)
		if err := st.DB.Exec("UPDATE vms SET status_changed_at = ? WHERE id = 'e-running'", t0.Add(-time.Hour)).Error; err != nil {
			t.Fatal(err)
		}
		interrupted := []models.VMStatus{models.VMInterrupted}
		for _, tc := range []struct {
			name string
			w    store.Workloads
			from []models.VMStatus
			want []string
		}{
			{"every interrupted row", store.Workloads{}, interrupted, []string{"a-lost", "b-lost-late", "c-spot", "d-undated"}},
			{"statusReason exactly node_lost", store.Workloads{Reason: models.ReasonNodeLost}, interrupted,
				[]string{"a-lost", "b-lost-late", "d-undated"}},
			{"interrupted before t0 − 1h, dated only", store.Workloads{InterruptedBefore: t0.Add(-time.Hour)}, interrupted,
				[]string{"a-lost", "c-spot"}},
			{"the first two by id", store.Workloads{Limit: 2}, interrupted, []string{"a-lost", "b-lost-late"}},
			{"running since before t0 − 30m", store.Workloads{InStatusBefore: t0.Add(-30 * time.Minute)},
				[]models.VMStatus{models.VMRunning}, []string{"e-running"}},
			{"running since before t0 − 2h", store.Workloads{InStatusBefore: t0.Add(-2 * time.Hour)},
				[]models.VMStatus{models.VMRunning}, []string{}},
		} {
			inTx(t, st, func(tx *store.Txn) error {
				rows, err := st.LockWorkloads(tx, tc.w, tc.from)
				if got := rows.IDs(); err == nil && !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
				}
				return err
			})
		}

		// ApplyToLocked applies a transition to the rows it allows only.
		var n int64
		inTx(t, st, func(tx *store.Txn) error {
			rows, err := st.LockWorkloads(tx, store.Workloads{}, []models.VMStatus{models.VMInterrupted, models.VMRunning})
			if err != nil {
				return err
			}
			n, err = st.ApplyToLocked(tx, rows, store.Change{Transition: models.NodeBack, Actor: models.Actor{Kind: models.ActorAgent, ID: "dgx-01"}}, t0)
			return err
		})
		var resumed []string
		st.DB.Table("vms").Where("status = ?", models.VMRunning).Order("id").Pluck("id", &resumed)
		if n != 3 || !reflect.DeepEqual(resumed, []string{"a-lost", "b-lost-late", "d-undated", "e-running"}) {
			t.Errorf("node-back on every row: %d applied, running %v", n, resumed)
		}
	})
}

// The sweep's node reads: silent nodes by status (and, when asked, only
// those with rows in given statuses), leaving nodes either side of an
// instant; SetNodesStatus counts the nodes it changed.
func TestSweepNodeReads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		datasettest.Load(t, st, primitivesFixture)
		datasettest.Load(t, st, `{"nodes": [
			{"id": "n2", "name": "n2", "status": "offline", "lastHeartbeatAt": "2025-03-01T11:00:00Z"},
			{"id": "n3", "name": "n3", "status": "online", "lastHeartbeatAt": "2025-03-01T11:59:50Z", "leavingAt": "2025-03-01T13:00:00Z"},
			{"id": "n4", "name": "n4", "status": "online", "leavingAt": "2025-03-01T12:00:00Z"},
			{"id": "n5", "name": "n5", "status": "removed", "leavingAt": "2025-03-01T10:00:00Z"}]}`)
		running := []models.VMStatus{models.VMRunning}
		inTx(t, st, func(tx *store.Txn) error {
			offline, err := st.LockSilentNodes(tx, models.NodeOffline, t0.Add(-time.Minute), nil)
			if err != nil {
				return err
			}
			withRunning, err := st.LockSilentNodes(tx, models.NodeOffline, t0.Add(-time.Minute), running)
			if err != nil {
				return err
			}
			online, err := st.LockSilentNodes(tx, models.NodeOnline, t0, nil)
			if err != nil {
				return err
			}
			left, err := st.LockNodesLeft(tx, t0)
			if err != nil {
				return err
			}
			ahead, err := st.NodesLeavingAfter(tx, t0, running)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(offline, []string{"n1", "n2"}) || !reflect.DeepEqual(withRunning, []string{"n1"}) ||
				!reflect.DeepEqual(online, []string{"n3"}) || !reflect.DeepEqual(left, []store.NodeState{{ID: "n4", Status: models.NodeOnline}}) ||
				len(ahead) != 0 {
				t.Errorf("offline %v, with running rows %v, online %v, left %v, ahead %v", offline, withRunning, online, left, ahead)
			}
			changed, err := st.SetNodesStatus(tx, []string{"n1", "n2", "n3"}, models.NodeOffline)
			if err == nil && changed != 1 {
				t.Errorf("SetNodesStatus changed %d nodes, want 1 (n3)", changed)
			}
			return err
		})
		if n := node(t, st, "n3"); n.Status != models.NodeOffline {
			t.Errorf("n3 = %s", n.Status)
		}
	})
}

// Assignments lists the rows in the statuses asked for, with their GPUs'
// UUIDs, and none on a removed node.
func TestAssignments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		datasettest.Load(t, st, primitivesFixture)
		ctx := context.Background()
		got, err := st.Assignments(ctx, "n1", []models.VMStatus{models.VMRunning, models.VMDeploying}, true)
		if err != nil || !reflect.DeepEqual(got, []store.Assignment{{ID: "e-running", GPUUUIDs: []string{"GPU-b"}, GPUIndexes: []int{1}, NodeID: "n1", Status: models.VMRunning}}) {
			t.Errorf("running and deploying: %+v %v", got, err)
		}
		got, err = st.Assignments(ctx, "n1", []models.VMStatus{models.VMInterrupted}, true)
		if err != nil || len(got) != 4 || got[0].ID != "a-lost" || !reflect.DeepEqual(got[0].GPUUUIDs, []string{"GPU-a"}) ||
			!reflect.DeepEqual(got[1].GPUUUIDs, []string{}) {
			t.Errorf("interrupted: %+v %v", got, err)
		}
		st.DB.Exec("UPDATE nodes SET status = 'removed' WHERE id = 'n1'")
		if got, err := st.Assignments(ctx, "n1", []models.VMStatus{models.VMRunning}, true); err != nil || len(got) != 0 {
			t.Errorf("a removed node: %+v %v", got, err)
		}
	})
}
