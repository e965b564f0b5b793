package nodes

import (
	"context"
	"slices"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// quietFixture is a node running one VM (vm1 on GPU-a, running and ready
// at generation 1) beside a failed GPU, and an idle node.
const quietFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o", "name": "O", "tenantId": 1}],
 "nodes": [
  {"id": "n1", "name": "dgx-01", "clusterId": "c1", "status": "online", "agentVersion": "2.7.0", "lastHeartbeatAt": "2025-03-01T11:00:00Z",
   "gpus": [
    {"id": "g0", "index": 0, "uuid": "GPU-a", "modelId": "h100"},
    {"id": "g1", "index": 1, "uuid": "GPU-b", "modelId": "h100"},
    {"id": "g2", "index": 2, "uuid": "GPU-c", "modelId": "h100", "health": "failed", "failedReason": "XID 48"}]},
  {"id": "n2", "name": "dgx-02", "clusterId": "c1", "status": "online", "agentVersion": "2.7.0", "lastHeartbeatAt": "2025-03-01T11:00:00Z",
   "gpus": [{"id": "g9", "index": 0, "uuid": "GPU-z", "modelId": "h100"}]}],
 "vms": [
  {"id": "vm1", "name": "a", "organizationId": "o", "nodeId": "n1", "status": "running", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["g0"]}]
}`

// A heartbeat that changes nothing is filed without the full report's
// transaction: one statement writes it (two on SQLite, whose samples
// statement runs apart), beside the answer's reads of what the node runs
// (two for a node running a VM: its rows with their GPUs and volumes, its
// VMs' keys; one for an idle node). Changed samples are written in that
// statement; unchanged ones are not written again.
// Whatever else a heartbeat brings (a GPU failing, a stale sequence, a
// node the sweep took offline) is the full report's, as before. The counts
// leave out the node credential's lookup, which the face makes first.
func TestQuietHeartbeat(t *testing.T) {
	// Per engine: a busy node's quiet heartbeat, an idle node's.
	want := map[store.Dialect][2]int64{store.SQLite: {4, 3}, store.Postgres: {3, 2}}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, quietFixture)
		storetest.Exec(t, st, "UPDATE vms SET generation = 1, provisioning_stage = 'ready' WHERE id = 'vm1'")
		count := storetest.CountStatements(t, st)
		svc := service(st)
		who := Reporter{Node: &nodeid.Identity{NodeName: "dgx-01", ClusterID: "c1"}}
		seq := int64(100)
		gpus := []agentapi.HeartbeatGPU{
			{UUID: "GPU-a", Health: "healthy", Utilization: 50, MemoryUsedBytes: 1 << 30},
			{UUID: "GPU-b", Health: "healthy"},
			{UUID: "GPU-c", Health: "failed", FailedReason: "XID 48"}}
		beat := func(gpus []agentapi.HeartbeatGPU) (Report, int64, time.Time, error) {
			t.Helper()
			seq++
			in := agentapi.HeartbeatRequest{NodeName: "dgx-01", AgentVersion: "2.7.0", GPUs: gpus, Sequence: seq,
				Workloads: []agentapi.WorkloadReport{{ID: "vm1", Generation: 1, State: "running", ProvisioningStage: "ready"}}}
			before := store.Now()
			var rep Report
			var err error
			n := count.During(func() { rep, err = svc.ReportHeartbeat(ctx, who, in) })
			return rep, n, before, err
		}
		type sample struct {
			UUID            string
			Utilization     *int
			MemoryUsedBytes *int64
			SampledAt       *time.Time
		}
		samples := func() []sample {
			var s []sample
			storetest.Scan(t, st, &s, "SELECT uuid, utilization, memory_used_bytes, sampled_at FROM gpus WHERE node_id = 'n1' ORDER BY idx")
			return s
		}
		check := func(what string, rep Report, stmts int64, before time.Time, err error) models.Node {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if stmts != want[st.Dialect][0] {
				t.Errorf("%s: %d statements, want %d", what, stmts, want[st.Dialect][0])
			}
			if rep.NodeID != "n1" || rep.Status != models.NodeOnline || len(rep.Workloads) != 1 ||
				rep.Workloads[0].ID != "vm1" || rep.Workloads[0].Generation != 1 || !slices.Equal(rep.Workloads[0].GPUs, []string{"GPU-a"}) {
				t.Errorf("%s: answered %+v", what, rep)
			}
			n := node(t, st, "n1")
			if n.Status != models.NodeOnline || n.LastHeartbeatAt.Before(before) || !n.AgentReportedAt.Equal(*n.LastHeartbeatAt) ||
				n.AgentVersion != "2.7.0" {
				t.Errorf("%s: node %+v", what, n)
			}
			var last int64
			storetest.Scan(t, st, &last, "SELECT report_sequence FROM nodes WHERE id = 'n1'")
			if last != seq {
				t.Errorf("%s: report sequence %d, want %d", what, last, seq)
			}
			return n
		}

		// The first samples are written.
		rep, n, before, err := beat(gpus)
		first := check("first", rep, n, before, err)
		s := samples()
		if *s[0].Utilization != 50 || *s[0].MemoryUsedBytes != 1<<30 || !s[0].SampledAt.Equal(*first.LastHeartbeatAt) ||
			*s[1].Utilization != 0 || *s[2].Utilization != 0 {
			t.Errorf("first samples %+v", s)
		}
		// The same again: only the node's row is written.
		rep, n, before, err = beat(gpus)
		again := check("the same again", rep, n, before, err)
		if s := samples(); !again.LastHeartbeatAt.After(*first.LastHeartbeatAt) || !s[0].SampledAt.Equal(*first.LastHeartbeatAt) {
			t.Errorf("an unchanged sample was written again: %+v (node heard at %v)", s, again.LastHeartbeatAt)
		}
		// One sample changed: it alone is written.
		gpus[1].Utilization = 70
		rep, n, before, err = beat(gpus)
		changed := check("a changed sample", rep, n, before, err)
		if s := samples(); *s[1].Utilization != 70 || !s[1].SampledAt.Equal(*changed.LastHeartbeatAt) ||
			*s[0].Utilization != 50 || !s[0].SampledAt.Equal(*first.LastHeartbeatAt) {
			t.Errorf("after one changed sample %+v", s)
		}
		if e := storetest.Count(t, st, "node_events", ""); e != 0 {
			t.Errorf("%d node events", e)
		}

		// An idle node's quiet heartbeat.
		idle := count.During(func() {
			_, err = svc.ReportHeartbeat(ctx, Reporter{Node: &nodeid.Identity{NodeName: "dgx-02", ClusterID: "c1"}},
				agentapi.HeartbeatRequest{NodeName: "dgx-02", AgentVersion: "2.7.0", Sequence: 1,
					GPUs: []agentapi.HeartbeatGPU{{UUID: "GPU-z", Health: "healthy"}}})
		})
		if err != nil || idle != want[st.Dialect][1] {
			t.Errorf("idle node: %d statements (want %d), %v", idle, want[st.Dialect][1], err)
		}

		// Not quiet: a GPU failing is the full report's, with its event.
		gpus[1] = agentapi.HeartbeatGPU{UUID: "GPU-b", Health: "failed", FailedReason: "XID 79"}
		if _, _, _, err := beat(gpus); err != nil {
			t.Fatal(err)
		}
		if r := gpuRows(t, st, "n1"); r != "0:g0:GPU-a:healthy::vm1 1:g1:GPU-b:failed:XID 79: 2:g2:GPU-c:failed:XID 48:" {
			t.Errorf("after GPU-b failed: %s", r)
		}
		if e := storetest.Count(t, st, "node_events", "kind = ?", models.NodeEventGPUHealth); e != 1 {
			t.Errorf("%d gpu_failed events", e)
		}
		// A stale sequence is refused, and writes nothing.
		seq -= 2
		_, _, _, err = beat(gpus)
		datasettest.WantError(t, err, 409, CodeStaleReport, "report sequence 103 is not greater than 104, the last this node's reports carried; a replayed or reordered report is refused")
		// The sweep took the node offline and interrupted vm1: the next
		// heartbeat brings both back.
		storetest.Exec(t, st, "UPDATE nodes SET status = 'offline' WHERE id = 'n1'")
		storetest.Exec(t, st, "UPDATE vms SET status = 'interrupted', status_reason = 'node_lost', interrupted_at = ? WHERE id = 'vm1'", t0)
		seq += 10
		if rep, _, _, err := beat(gpus); err != nil || rep.Status != models.NodeOnline || len(rep.Workloads) != 1 {
			t.Fatalf("back: %+v %v", rep, err)
		}
		if v := vm(t, st, "vm1"); v.Status != models.VMRunning || node(t, st, "n1").Status != models.NodeOnline {
			t.Errorf("after the node came back: vm1 %s", v.Status)
		}
	})
}
