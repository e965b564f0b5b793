package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

const oldAgentFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o", "name": "O", "tenantId": 1}],
 "nodes": [{"id": "n1", "name": "dgx-old", "clusterId": "c1", "status": "online", "agentVersion": "2.6.1", "cpuCores": 100, "ramGb": 1000, "diskGb": 5000,
   "gpus": [{"id": "g0", "index": 0, "uuid": "GPU-a", "modelId": "h100"}, {"id": "g1", "index": 1, "uuid": "GPU-b", "modelId": "h100"}]}],
 "vms": [
  {"id": "vm1", "name": "a", "organizationId": "o", "nodeId": "n1", "status": "running", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["g0"],
   "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100},
  {"id": "pod1", "name": "p", "organizationId": "o", "nodeId": "n1", "status": "running", "capabilityTier": "pod", "gpuModelId": "h100",
   "gpuCount": 1, "gpuIds": ["g1"], "volumeGb": 10, "imageUrl": "docker.io/library/busybox:1.36"}]}`

// An agent of today's shape (2.6.1: no provisioningStage, states running,
// exited and failed only, reading assignments as id, generation and gpus)
// against this server: its reports move rows as before; a restart of its
// running pod is a new generation it acknowledges by running it; a stop
// is never sent to it as stop — the row is left out of its answers while
// it holds its GPUs — and its next heartbeat, which no longer lists the
// row, frees them.
func TestOldAgentTearsDownByOmission(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, oldAgentFixture)
		svc := New(st, compute.New(st), nodeid.New(st), Options{KeysAccepted: true})
		who := Reporter{Caller: auth.SystemCaller()}
		seq := int64(0)
		heartbeat := func(workloads string) Report {
			t.Helper()
			seq++
			var in agentapi.HeartbeatRequest
			body := fmt.Sprintf(`{"nodeName": "dgx-old", "agentVersion": "2.6.1", "sequence": %d,
				"gpus": [{"uuid": "GPU-a", "health": "healthy", "utilization": 10, "memoryUsedBytes": 1}],
				"workloads": [%s]}`, seq, workloads)
			if err := json.Unmarshal([]byte(body), &in); err != nil {
				t.Fatal(err)
			}
			rep, err := svc.ReportHeartbeat(ctx, who, in)
			if err != nil {
				t.Fatalf("heartbeat %s: %v", body, err)
			}
			return rep
		}
		var inv agentapi.InventoryRequest
		if err := json.Unmarshal([]byte(`{"nodeName": "dgx-old", "clusterId": "c1", "agentVersion": "2.6.1", "cpuCores": 100, "ramGb": 1000,
			"diskGb": 5000, "sequence": 1, "gpus": [{"index": 0, "uuid": "GPU-a", "name": "NVIDIA H100 80GB HBM3", "health": "healthy"},
			{"index": 1, "uuid": "GPU-b", "name": "NVIDIA H100 80GB HBM3", "health": "healthy"}]}`), &inv); err != nil {
			t.Fatal(err)
		}
		seq = 1
		rep, err := svc.ReportInventory(ctx, who, inv)
		if err != nil || ids(rep.Workloads) != "pod1:0:run vm1:0:run" {
			t.Fatalf("inventory: %+v %v", rep.Workloads, err)
		}

		// A restart of the running pod: a new generation, recreate; the
		// old agent starts it again and reports it running.
		userApplies(t, st, "pod1", models.RestartReboot)
		if rep := heartbeat(`{"id": "vm1", "generation": 0, "state": "running"}, {"id": "pod1", "generation": 0, "state": "running"}`); ids(rep.Workloads) != "pod1:1:recreate vm1:0:run" {
			t.Fatalf("after the restart: %s", ids(rep.Workloads))
		}
		if rep := heartbeat(`{"id": "vm1", "generation": 0, "state": "running"}, {"id": "pod1", "generation": 1, "state": "running"}`); ids(rep.Workloads) != "pod1:1:run vm1:0:run" {
			t.Fatalf("after the recreate ran: %s", ids(rep.Workloads))
		}
		if evs := events(t, st, "pod1"); evs != "restart-reboot@1 agent-restarted@1" {
			t.Errorf("pod1 events: %s", evs)
		}

		// The VM is stopped: held, not sent (the old agent would run it).
		userApplies(t, st, "vm1", models.UserStop)
		checkHeld(t, st, "vm1", true, 1)
		// It still ran it when it sent this one: nothing is freed.
		if rep := heartbeat(`{"id": "vm1", "generation": 0, "state": "running"}, {"id": "pod1", "generation": 1, "state": "running"}`); ids(rep.Workloads) != "pod1:1:run" {
			t.Fatalf("while vm1 tears down: %s", ids(rep.Workloads))
		}
		checkHeld(t, st, "vm1", true, 1)
		// It dropped it: gone.
		heartbeat(`{"id": "pod1", "generation": 1, "state": "running"}`)
		checkHeld(t, st, "vm1", false, 0)
		if evs := events(t, st, "vm1"); evs != "agent-stage@0 user-stop@0 agent-gone@0" {
			t.Errorf("vm1 events: %s", evs)
		}
		if v := storetest.Violations(t, st); v != nil {
			t.Errorf("violations: %v", v)
		}
	})
}

// An agent of 2.7.0 is told stop, with volume.delete for a terminated row,
// and its gone report frees what the row held.
func TestAgentToldStopReportsGone(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, oldAgentFixture)
		svc := New(st, compute.New(st), nodeid.New(st), Options{KeysAccepted: true})
		who := Reporter{Caller: auth.SystemCaller()}
		hb := func(seq int64, ws ...agentapi.WorkloadReport) Report {
			t.Helper()
			rep, err := svc.ReportHeartbeat(ctx, who, agentapi.HeartbeatRequest{NodeName: "dgx-old", AgentVersion: "2.7.0", Sequence: seq, Workloads: ws})
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}
		hb(1, agentapi.WorkloadReport{ID: "vm1", State: "running"}, agentapi.WorkloadReport{ID: "pod1", State: "running"})
		userApplies(t, st, "pod1", models.UserTerminate)
		rep := hb(2, agentapi.WorkloadReport{ID: "vm1", State: "running"}, agentapi.WorkloadReport{ID: "pod1", State: "running"})
		if ids(rep.Workloads) != "pod1:0:stop vm1:0:run" || rep.Workloads[0].Volume == nil || !rep.Workloads[0].Volume.Delete ||
			rep.Workloads[0].Volume.MountPath != agentapi.WorkspaceMount || len(rep.Workloads[0].GPUs) != 1 {
			t.Fatalf("after the terminate: %+v", rep.Workloads)
		}
		checkHeld(t, st, "pod1", true, 1)
		rep = hb(3, agentapi.WorkloadReport{ID: "vm1", State: "running"}, agentapi.WorkloadReport{ID: "pod1", State: "gone"})
		if ids(rep.Workloads) != "vm1:0:run" {
			t.Fatalf("after gone: %s", ids(rep.Workloads))
		}
		checkHeld(t, st, "pod1", false, 0)
		if evs := events(t, st, "pod1"); evs != "agent-stage@0 user-terminate@0 agent-gone@0" {
			t.Errorf("pod1 events: %s", evs)
		}
	})
}

// ids is "id:generation:action" of each assignment.
func ids(as []agentapi.Assignment) string {
	out := ""
	for i, a := range as {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%s:%d:%s", a.ID, a.Generation, a.Action)
	}
	return out
}

// events is "transition@generation" of each of id's events.
func events(t *testing.T, st *store.Store, id string) string {
	t.Helper()
	var evs []models.VMEvent
	storetest.Scan(t, st, &evs, "SELECT * FROM vm_events WHERE vm_id = ? ORDER BY id", id)
	out := ""
	for i, e := range evs {
		if i > 0 {
			out += " "
		}
		g := -1
		if e.Generation != nil {
			g = *e.Generation
		}
		out += fmt.Sprintf("%s@%d", e.Transition, g)
	}
	return out
}

// checkHeld checks a row's tearingDown and how many GPUs it holds.
func checkHeld(t *testing.T, st *store.Store, id string, down bool, gpus int64) {
	t.Helper()
	var vm models.VM
	storetest.Take(t, st, &vm, "vms", "id = ?", id)
	held := storetest.Count(t, st, "gpus", "holder_vm_id = ?", id)
	if vm.TearingDown != down || held != gpus {
		t.Errorf("%s (%s): tearingDown %v holding %d GPUs, want %v and %d", id, vm.Status, vm.TearingDown, held, down, gpus)
	}
}

// The actions a row stores are the wire's, word for word.
func TestActionsAreTheWire(t *testing.T) {
	for have, want := range map[string]string{models.ActionRun: agentapi.ActionRun, models.ActionReboot: agentapi.ActionReboot,
		models.ActionRecreate: agentapi.ActionRecreate} {
		if have != want {
			t.Errorf("models %q, agentapi %q", have, want)
		}
	}
	pod, vm := &models.VM{CapabilityTier: models.TierPod}, &models.VM{}
	if a, b, c := models.Step(models.RestartReboot).ActionFor(pod), models.Step(models.RestartReboot).ActionFor(vm),
		models.Step(models.RestartDeploy).ActionFor(vm); a != models.ActionRecreate || b != models.ActionReboot || c != models.ActionRun {
		t.Errorf("restart-reboot of a pod %q, of a VM %q; restart-deploy %q", a, b, c)
	}
	if a := models.Step(models.UserStop).ActionFor(vm); a != "" {
		t.Errorf("user-stop starts a generation: %q", a)
	}
}

// userApplies applies transition to organization o's row id as the user
// k would, at t0.
func userApplies(t *testing.T, st *store.Store, id string, transition models.TransitionName) {
	t.Helper()
	if err := st.InTx(context.Background(), func(tx *store.Txn) error {
		vm, err := st.LockVM(tx, "o", id)
		if err != nil {
			return err
		}
		_, err = st.Apply(tx, vm, store.Change{Transition: transition, Actor: models.Actor{Kind: models.ActorUser, ID: "k"}}, t0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
