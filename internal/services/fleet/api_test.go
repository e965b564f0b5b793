package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// fleetExtra adds to servertest.Base the platform operator's organization
// (key platform-admin, nodes.admin), an online node n3 with 4 free H100,
// two interruptible pods of org-globex on n1 (GPU 5 at 100 cents an hour,
// GPU 6 at 50), and two stopped reserved pods of org-acme on n1 (1 and 3
// GPUs). n1's GPU 7 is failed, so n1 has no free GPU.
const fleetExtra = `{
 "organizations": [{"id": "org-platform", "name": "Platform", "tenantId": 9000}],
 "apiKeys": [{"token": "platform-admin", "organizationId": "org-platform", "permissions": ["nodes.admin", "compute.read"]}],
 "nodes": [{"id": "n3", "name": "gpu-node-3", "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210", "nodePool": "default",
   "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 1024, "diskGb": 10000, "gpus": [
   {"id": "n3-g0", "index": 0, "uuid": "GPU-n3-0", "address": "0000:18:00.0", "modelId": "h100-80gb", "health": "healthy"},
   {"id": "n3-g1", "index": 1, "uuid": "GPU-n3-1", "address": "0000:2A:00.0", "modelId": "h100-80gb", "health": "healthy"},
   {"id": "n3-g2", "index": 2, "uuid": "GPU-n3-2", "address": "0000:3A:00.0", "modelId": "h100-80gb", "health": "healthy"},
   {"id": "n3-g3", "index": 3, "uuid": "GPU-n3-3", "address": "0000:5D:00.0", "modelId": "h100-80gb", "health": "healthy"}]}],
 "vms": [
  {"id": "spot-dear", "name": "spot-dear", "organizationId": "org-globex", "nodeId": "n1", "status": "running",
   "capabilityTier": "pod", "computeClass": "interruptible", "pricePerHourCents": 100, "createdAt": "2024-06-01T00:00:00.000Z",
   "gpuModelId": "h100-80gb", "gpuCount": 1, "gpuIds": ["n1-g5"], "volumeGb": 10},
  {"id": "spot-cheap", "name": "spot-cheap", "organizationId": "org-globex", "nodeId": "n1", "status": "running",
   "capabilityTier": "pod", "computeClass": "interruptible", "pricePerHourCents": 50, "createdAt": "2024-06-01T00:00:00.000Z",
   "gpuModelId": "h100-80gb", "gpuCount": 1, "gpuIds": ["n1-g6"], "volumeGb": 10},
  {"id": "res-1", "name": "res-1", "organizationId": "org-acme", "nodeId": "n1", "status": "stopped", "statusReason": "user_stopped",
   "capabilityTier": "pod", "computeClass": "reserved", "createdAt": "2024-06-02T00:00:00.000Z",
   "gpuModelId": "h100-80gb", "gpuCount": 1, "volumeGb": 10},
  {"id": "res-3", "name": "res-3", "organizationId": "org-acme", "nodeId": "n1", "status": "stopped", "statusReason": "user_stopped",
   "capabilityTier": "pod", "computeClass": "reserved", "createdAt": "2024-06-03T00:00:00.000Z",
   "gpuModelId": "h100-80gb", "gpuCount": 3, "volumeGb": 10}
 ]
}`

func newFleetEnv(t *testing.T, st *store.Store) *servertest.Env {
	env := servertest.New(t, st, servertest.Base)
	if _, err := dataset.LoadFile(context.Background(), st, []byte(fleetExtra)); err != nil {
		t.Fatal(err)
	}
	return env
}

// workload is a row as a test checks it after a transition.
type workload struct {
	Status       models.VMStatus
	StatusReason string
	NodeID       *string
	DeletedAt    *time.Time
	GPUs         int64
	CPUCores     int // the host share it counts for (plain VMs in a holding status)
}

func readWorkload(t *testing.T, st *store.Store, id string) workload {
	t.Helper()
	var vm models.VM
	storetest.Take(t, st, &vm, "vms", "id = ?", id)
	w := workload{Status: vm.Status, StatusReason: vm.StatusReason, NodeID: vm.NodeID, DeletedAt: vm.DeletedAt}
	w.GPUs = storetest.Count(t, st, "gpus", "holder_vm_id = ?", id)
	// Host shares and InfiniBand addresses are derived from a holding
	// status (store.Snapshot): a row that does not hold counts for none.
	if vm.Status.Holds() && !vm.IsPod() {
		w.CPUCores = vm.CPUCores
	}
	return w
}

// lastEvent is the newest event of a row.
func lastEvent(t *testing.T, st *store.Store, org, id string) *models.VMEvent {
	t.Helper()
	evs, err := st.EventsAfter(context.Background(), org, []string{id}, 0, 100)
	if err != nil || len(evs) == 0 {
		t.Fatalf("events of %s: %v %d", id, err, len(evs))
	}
	return evs[len(evs)-1]
}

// wantEnded checks a row that a transition stopped: status, reason, no GPU
// and no host share held, and its event with the actor's kind.
func wantEnded(t *testing.T, st *store.Store, org, id string, status models.VMStatus, reason string, actor models.ActorKind) {
	t.Helper()
	w := readWorkload(t, st, id)
	if w.Status != status || w.StatusReason != reason || w.GPUs != 0 || w.CPUCores != 0 {
		t.Errorf("%s: %+v, want %s %q holding nothing", id, w, status, reason)
	}
	ev := lastEvent(t, st, org, id)
	if ev.To != status || ev.Reason != reason || ev.ActorKind != actor {
		t.Errorf("%s: event %+v, want to %s %q by %s", id, ev, status, reason, actor)
	}
}

func TestDecommissionMarksRemovesAndRestartsElsewhere(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newFleetEnv(t, st)
		at := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
		leaving := "node leaving at " + at.Format(time.RFC3339)
		body := fmt.Appendf(nil, `{"leavingAt": %q}`, at.Format(time.RFC3339))

		if s, b := env.Do("PUT", "/v1/admin/nodes/n1/leaving-at", "acme-operator", body, nil); s != 403 || servertest.ErrorCode(t, b) != "FORBIDDEN" {
			t.Fatalf("without nodes.admin: %d %s", s, b)
		}
		past := []byte(`{"leavingAt": "2020-01-01T00:00:00Z"}`)
		if s, b := env.Do("PUT", "/v1/admin/nodes/n1/leaving-at", "platform-admin", past, nil); s != 400 {
			t.Fatalf("a past leavingAt: %d %s", s, b)
		}
		if s, b := env.Do("PUT", "/v1/admin/nodes/nope/leaving-at", "platform-admin", body, nil); s != 404 || servertest.ErrorCode(t, b) != "NODE_NOT_FOUND" {
			t.Fatalf("unknown node: %d %s", s, b)
		}
		s, b := env.Do("PUT", "/v1/admin/nodes/n1/leaving-at", "platform-admin", body, nil)
		if s != 200 {
			t.Fatalf("set leavingAt: %d %s", s, b)
		}
		var got struct {
			LeavingAt        string `json:"leavingAt"`
			WorkloadsChanged int    `json:"workloadsChanged"`
		}
		_ = json.Unmarshal(b, &got)
		// vm-acme-1, pod-acme-1, vm-globex-1, spot-dear, spot-cheap run on n1.
		if got.WorkloadsChanged != 5 || got.LeavingAt != models.FormatTime(at) {
			t.Fatalf("set leavingAt answered %s", b)
		}
		w := readWorkload(t, st, "vm-acme-1")
		if w.Status != models.VMRunning || w.StatusReason != leaving || w.GPUs != 2 || w.CPUCores != 16 {
			t.Fatalf("vm-acme-1 on a leaving node: %+v", w)
		}
		if ev := lastEvent(t, st, "org-acme", "vm-acme-1"); ev.Reason != leaving || ev.ActorKind != models.ActorOperator {
			t.Fatalf("event: %+v", ev)
		}

		// GraphQL clears it (reasons cleared), then sets it again.
		const mut = `mutation($id: ID!, $at: Time) { setNodeLeavingAt(id: $id, leavingAt: $at) { workloadsChanged node { leavingAt } } }`
		r := env.GraphQL("platform-admin", mut, map[string]any{"id": "n1", "at": nil})
		var cleared struct {
			SetNodeLeavingAt struct {
				WorkloadsChanged int
				Node             struct{ LeavingAt *string }
			}
		}
		env.Decode(r, &cleared)
		if cleared.SetNodeLeavingAt.WorkloadsChanged != 5 || cleared.SetNodeLeavingAt.Node.LeavingAt != nil ||
			readWorkload(t, st, "pod-acme-1").StatusReason != "" {
			t.Fatalf("clear: %s", r.Data)
		}
		if r := env.GraphQL("acme-operator", mut, map[string]any{"id": "n1", "at": at.Format(time.RFC3339)}); r.Code() != "FORBIDDEN" {
			t.Fatalf("GraphQL without nodes.admin: %+v", r.Errors)
		}
		env.Decode(env.GraphQL("platform-admin", mut, map[string]any{"id": "n1", "at": at.Format(time.RFC3339)}), &cleared)

		// A workload that becomes running on the leaving node afterwards
		// carries the reason from the next sweep on.
		if s, b := env.Do("POST", "/v1/vms/vm-acme-1/restart", "acme-operator", nil, nil); s != 200 {
			t.Fatalf("reboot: %d %s", s, b)
		}
		if res, err := sweep.New(st).Sweep(context.Background(), time.Now().UTC(), time.Minute); err != nil || res.Leaving != 1 {
			t.Fatalf("sweep before leavingAt: %+v %v", res, err)
		}
		if w := readWorkload(t, st, "vm-acme-1"); w.StatusReason != leaving {
			t.Fatalf("rebooted on a leaving node: %+v", w)
		}

		// The instant passes: the node is removed, everything on it ends.
		res, err := sweep.New(st).Sweep(context.Background(), at.Add(time.Second), time.Minute)
		if err != nil || res.NodesRemoved != 1 || res.Removed != 8 {
			t.Fatalf("sweep after leavingAt: %+v %v", res, err)
		}
		var n1 models.Node
		storetest.Take(t, st, &n1, "nodes", "id = ?", "n1")
		if n1.Status != models.NodeRemoved {
			t.Fatalf("n1 is %s", n1.Status)
		}
		wantEnded(t, st, "org-acme", "vm-acme-1", models.VMStopped, models.ReasonNodeRemoved, models.ActorSweep)
		wantEnded(t, st, "org-acme", "pod-acme-1", models.VMStopped, models.ReasonNodeRemoved, models.ActorSweep)
		wantEnded(t, st, "org-acme", "vm-acme-2", models.VMStopped, models.ReasonNodeRemoved, models.ActorSweep)
		if again, _ := sweep.New(st).Sweep(context.Background(), at.Add(time.Second), time.Minute); again.Changed() {
			t.Fatalf("a second sweep changed %+v", again)
		}
		if s, b := env.Do("PUT", "/v1/admin/nodes/n1/leaving-at", "platform-admin", body, nil); s != 409 || servertest.ErrorCode(t, b) != "NODE_REMOVED" {
			t.Fatalf("leavingAt of a removed node: %d %s", s, b)
		}

		// A restart deploys fresh elsewhere (n3).
		if s, b := env.Do("POST", "/v1/vms/vm-acme-2/restart", "acme-operator", nil, nil); s != 200 {
			t.Fatalf("restart after removal: %d %s", s, b)
		}
		if w := readWorkload(t, st, "vm-acme-2"); w.Status != models.VMDeploying || *w.NodeID != "n3" || w.GPUs != 1 || w.CPUCores != 8 {
			t.Fatalf("vm-acme-2 after restart: %+v", w)
		}
	})
}

func TestReclaimStopsTheNodesInterruptibleWorkloads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newFleetEnv(t, st)
		if s, b := env.Do("POST", "/v1/admin/nodes/n1/reclaim", "globex-operator", nil, nil); s != 403 {
			t.Fatalf("without nodes.admin: %d %s", s, b)
		}
		s, b := env.Do("POST", "/v1/admin/nodes/n1/reclaim", "platform-admin", nil, nil)
		if s != 200 {
			t.Fatalf("reclaim: %d %s", s, b)
		}
		var got struct{ WorkloadsChanged int }
		_ = json.Unmarshal(b, &got)
		if got.WorkloadsChanged != 2 {
			t.Fatalf("reclaim answered %s", b)
		}
		wantEnded(t, st, "org-globex", "spot-dear", models.VMStopped, models.ReasonSpotReclaimed, models.ActorOperator)
		wantEnded(t, st, "org-globex", "spot-cheap", models.VMStopped, models.ReasonSpotReclaimed, models.ActorOperator)
		if w := readWorkload(t, st, "vm-globex-1"); w.Status != models.VMRunning || w.GPUs != 2 {
			t.Fatalf("a workload that is not interruptible was touched: %+v", w)
		}
		r := env.GraphQL("platform-admin", `mutation { reclaimNode(id: "n1") { workloadsChanged } }`, nil)
		if len(r.Errors) > 0 || string(r.Data) != `{"reclaimNode":{"workloadsChanged":0}}` {
			t.Fatalf("GraphQL reclaim again: %s %+v", r.Data, r.Errors)
		}
	})
}

func TestReservedRestartPreemptsInterruptibleCapacity(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newFleetEnv(t, st)
		// Three GPUs: even stopping both interruptible pods frees only two.
		s, b := env.Do("POST", "/v1/vms/res-3/restart", "acme-operator", nil, nil)
		if s != 503 || servertest.ErrorCode(t, b) != "POD_NODE_BUSY" {
			t.Fatalf("reserved pod that preemption cannot fit: %d %s", s, b)
		}
		for _, id := range []string{"spot-dear", "spot-cheap"} {
			if w := readWorkload(t, st, id); w.Status != models.VMRunning || w.GPUs != 1 {
				t.Fatalf("%s stopped though nothing could fit: %+v", id, w)
			}
		}
		// One GPU: the cheaper interruptible pod makes room.
		s, b = env.Do("POST", "/v1/vms/res-1/restart", "acme-operator", nil, nil)
		if s != 200 {
			t.Fatalf("reserved restart: %d %s", s, b)
		}
		wantEnded(t, st, "org-globex", "spot-cheap", models.VMStopped, models.ReasonSpotPreempted, models.ActorPlatform)
		if w := readWorkload(t, st, "spot-dear"); w.Status != models.VMRunning || w.GPUs != 1 {
			t.Fatalf("the dearer pod was stopped too: %+v", w)
		}
		var held string
		storetest.Scan(t, st, &held, "SELECT id FROM gpus WHERE holder_vm_id = ?", "res-1")
		if w := readWorkload(t, st, "res-1"); w.Status != models.VMDeploying || w.GPUs != 1 || held != "n1-g6" {
			t.Fatalf("res-1: %+v on %s", w, held)
		}
		// An on-demand pod of another organization never preempts.
		storetest.Exec(t, st, "UPDATE vms SET compute_class = 'on_demand' WHERE id = 'res-3'")
		if s, b := env.Do("POST", "/v1/vms/res-3/restart", "acme-operator", nil, nil); s != 503 {
			t.Fatalf("on-demand restart: %d %s", s, b)
		}
		if w := readWorkload(t, st, "spot-dear"); w.Status != models.VMRunning {
			t.Fatalf("an on-demand restart preempted: %+v", w)
		}
	})
}

func TestOrganizationStates(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newFleetEnv(t, st)
		put := func(org, state string) (int, []byte) {
			return env.Do("PUT", "/v1/admin/organizations/"+org+"/state", "platform-admin", fmt.Appendf(nil, `{"state": %q}`, state), nil)
		}
		if s, b := put("org-globex", "frozen"); s != 400 {
			t.Fatalf("unknown state: %d %s", s, b)
		}
		if s, b := put("org-platform", "suspended"); s != 409 {
			t.Fatalf("the operator's own organization: %d %s", s, b)
		}
		if s, b := env.Do("PUT", "/v1/admin/organizations/org-globex/state", "globex-operator", []byte(`{"state":"active"}`), nil); s != 403 {
			t.Fatalf("without nodes.admin: %d %s", s, b)
		}

		// Balance exhausted: its running workloads stop; reads still work,
		// restarts answer 402.
		s, b := put("org-globex", "balance_exhausted")
		if s != 200 {
			t.Fatalf("balance: %d %s", s, b)
		}
		var got struct{ WorkloadsStopped int }
		_ = json.Unmarshal(b, &got)
		if got.WorkloadsStopped != 3 {
			t.Fatalf("balance answered %s", b)
		}
		wantEnded(t, st, "org-globex", "vm-globex-1", models.VMStopped, models.ReasonInsufficientBalance, models.ActorOperator)
		wantEnded(t, st, "org-globex", "spot-cheap", models.VMStopped, models.ReasonInsufficientBalance, models.ActorOperator)
		if r := env.GraphQL("globex-operator", `{ vms { total } }`, nil); len(r.Errors) > 0 {
			t.Fatalf("reads of a balance-exhausted organization: %+v", r.Errors)
		}
		if s, b := env.Do("POST", "/v1/vms/vm-globex-1/restart", "globex-operator", nil, nil); s != 402 || servertest.ErrorCode(t, b) != "ORGANIZATION_BALANCE_EXHAUSTED" {
			t.Fatalf("restart with an exhausted balance: %d %s", s, b)
		}

		// Reinstated (GraphQL): restarts work again.
		r := env.GraphQL("platform-admin", `mutation { setOrganizationState(id: "org-globex", state: ACTIVE) { id state workloadsStopped } }`, nil)
		if len(r.Errors) > 0 || string(r.Data) != `{"setOrganizationState":{"id":"org-globex","state":"ACTIVE","workloadsStopped":0}}` {
			t.Fatalf("reinstate: %s %+v", r.Data, r.Errors)
		}
		if s, b := env.Do("POST", "/v1/vms/vm-globex-1/restart", "globex-operator", nil, nil); s != 200 {
			t.Fatalf("restart once active: %d %s", s, b)
		}

		// Suspended: the deploying VM stops; its keys answer 403 on both faces.
		r = env.GraphQL("platform-admin", `mutation { setOrganizationState(id: "org-globex", state: SUSPENDED) { workloadsStopped } }`, nil)
		if len(r.Errors) > 0 || string(r.Data) != `{"setOrganizationState":{"workloadsStopped":1}}` {
			t.Fatalf("suspend: %s %+v", r.Data, r.Errors)
		}
		wantEnded(t, st, "org-globex", "vm-globex-1", models.VMStopped, models.ReasonAccountSuspended, models.ActorOperator)
		wantRefused := func(code string) {
			t.Helper()
			if s, b := env.Do("POST", "/v1/vms/vm-globex-1/restart", "globex-operator", nil, nil); s != 403 || servertest.ErrorCode(t, b) != code {
				t.Fatalf("REST with a %s key: %d %s", code, s, b)
			}
			if s, b := env.Do("GET", "/api/v1/workloads/pods", "globex-operator", nil, nil); s != 403 {
				t.Fatalf("Run:ai with a %s key: %d %s", code, s, b)
			}
			r := env.GraphQL("globex-operator", `{ vms { total } }`, nil)
			if r.Status != http.StatusForbidden || r.Code() != code {
				t.Fatalf("GraphQL with a %s key: %d %+v", code, r.Status, r.Errors)
			}
		}
		wantRefused("ORGANIZATION_SUSPENDED")

		// Deleted: final; a running workload of another organization stops
		// with its reason.
		if s, b := put("org-globex", "deleted"); s != 200 {
			t.Fatalf("delete: %d %s", s, b)
		}
		wantRefused("ORGANIZATION_DELETED")
		if s, b := put("org-globex", "active"); s != 409 || servertest.ErrorCode(t, b) != "ORGANIZATION_DELETED" {
			t.Fatalf("reinstate a deleted organization: %d %s", s, b)
		}
		if s, b := put("org-acme", "deleted"); s != 200 {
			t.Fatalf("delete org-acme: %d %s", s, b)
		}
		wantEnded(t, st, "org-acme", "vm-acme-1", models.VMStopped, models.ReasonOrganizationDeleted, models.ActorOperator)
		wantEnded(t, st, "org-acme", "pod-acme-1", models.VMStopped, models.ReasonOrganizationDeleted, models.ActorOperator)
		if s, b := put("org-nope", "suspended"); s != 404 {
			t.Fatalf("unknown organization: %d %s", s, b)
		}
	})
}

// A pod interrupted for 7 days is deleted: gone from every read, count and
// nested field, 404 on restart; its row and events stay.
func TestDeletedPodIsGoneFromTheAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newFleetEnv(t, st)
		now := store.Now()
		total := func() int {
			var d struct{ Vms struct{ Total int } }
			env.Decode(env.GraphQL("acme-operator", `{ vms { total } }`, nil), &d)
			return d.Vms.Total
		}
		before := total()
		storetest.Exec(t, st, "UPDATE vms SET status = 'interrupted', status_reason = 'node_lost', interrupted_at = ? WHERE id = 'pod-acme-1'",
			now.Add(-8*24*time.Hour))
		if res, err := sweep.New(st).Sweep(context.Background(), now, time.Minute); err != nil || res.Deleted != 1 {
			t.Fatalf("sweep: %+v %v", res, err)
		}
		if w := readWorkload(t, st, "pod-acme-1"); w.DeletedAt == nil || w.GPUs != 0 {
			t.Fatalf("pod-acme-1 after 7 days: %+v", w)
		}
		if after := total(); after != before-1 {
			t.Fatalf("vms total %d, was %d", after, before)
		}
		r := env.GraphQL("acme-operator", `{ vm(id: "pod-acme-1") { id } vms(limit: 100) { vms { id } }
			node(id: "n1") { vms { id } gpus { index vm { id } } } }`, nil)
		var d struct {
			VM   *struct{ ID string }
			Vms  struct{ Vms []struct{ ID string } }
			Node struct {
				Vms  []struct{ ID string }
				GPUs []struct {
					Index int
					VM    *struct{ ID string }
				}
			}
		}
		env.Decode(r, &d)
		if d.VM != nil {
			t.Fatal("vm(id) answers a deleted pod")
		}
		for _, v := range append(d.Vms.Vms, d.Node.Vms...) {
			if v.ID == "pod-acme-1" {
				t.Fatalf("a deleted pod is listed: %s", r.Data)
			}
		}
		for _, g := range d.Node.GPUs {
			if g.VM != nil && g.VM.ID == "pod-acme-1" {
				t.Fatalf("GPU %d names a deleted pod", g.Index)
			}
		}
		if s, b := env.Do("POST", "/v1/vms/pod-acme-1/restart", "acme-operator", nil, nil); s != 404 || servertest.ErrorCode(t, b) != "VM_NOT_FOUND" {
			t.Fatalf("restart of a deleted pod: %d %s", s, b)
		}
		if ev := lastEvent(t, st, "org-acme", "pod-acme-1"); ev.Transition != models.ExpirePod || ev.ActorKind != models.ActorSweep {
			t.Fatalf("the audit trail: %+v", ev)
		}
	})
}

// A reserved pod whose node is gone (placed afresh) and that finds no node
// with room (VM_NO_CAPACITY) preempts on the node the dry run chose.
func TestReservedPlacementPreemptsWhenNoNodeHasRoom(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newFleetEnv(t, st)
		storetest.Exec(t, st, "UPDATE nodes SET status = 'offline' WHERE id = 'n3'")
		storetest.Exec(t, st, "UPDATE vms SET status_reason = 'node_removed' WHERE id = 'res-1'")
		s, b := env.Do("POST", "/v1/vms/res-1/restart", "acme-operator", nil, nil)
		if s != 200 {
			t.Fatalf("reserved placement: %d %s", s, b)
		}
		wantEnded(t, st, "org-globex", "spot-cheap", models.VMStopped, models.ReasonSpotPreempted, models.ActorPlatform)
		if w := readWorkload(t, st, "res-1"); w.Status != models.VMDeploying || *w.NodeID != "n1" || w.GPUs != 1 {
			t.Fatalf("res-1: %+v", w)
		}
		if ev := lastEvent(t, st, "org-acme", "res-1"); ev.Transition != models.RestartReplace {
			t.Fatalf("res-1 event: %+v", ev)
		}
	})
}
