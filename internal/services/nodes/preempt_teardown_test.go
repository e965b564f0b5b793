package nodes

import (
	"context"
	"errors"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// preemptFixture: an agent's node (dgx-spot, two GPUs) running an
// interruptible pod and an interruptible VM of organization g (GPU-a and
// GPU-b), and two stopped reserved workloads of organization o there, a
// pod and a VM, one GPU each: each restart finds the node busy and
// preempts.
const preemptFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o", "name": "O", "tenantId": 1}, {"id": "g", "name": "G", "tenantId": 2}],
 "apiKeys": [{"token": "o-op", "organizationId": "o", "permissions": ["compute.read", "compute.operate"]},
   {"token": "g-op", "organizationId": "g", "permissions": ["compute.read", "compute.operate"]}],
 "nodes": [{"id": "n1", "name": "dgx-spot", "clusterId": "c1", "status": "online", "agentVersion": "2.7.0", "cpuCores": 40, "ramGb": 400, "diskGb": 2000,
   "gpus": [{"id": "g0", "index": 0, "uuid": "GPU-a", "modelId": "h100"}, {"id": "g1", "index": 1, "uuid": "GPU-b", "modelId": "h100"}]}],
 "vms": [
  {"id": "spot-pod", "name": "sp", "organizationId": "g", "nodeId": "n1", "status": "running", "capabilityTier": "pod", "computeClass": "interruptible",
   "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["g0"], "volumeGb": 10},
  {"id": "spot-vm", "name": "sv", "organizationId": "g", "nodeId": "n1", "status": "running", "computeClass": "interruptible",
   "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["g1"], "cpuCores": 30, "ramGb": 300, "diskSizeGb": 1500},
  {"id": "res-pod", "name": "rp", "organizationId": "o", "nodeId": "n1", "status": "stopped", "statusReason": "user_stopped",
   "capabilityTier": "pod", "computeClass": "reserved", "gpuModelId": "h100", "gpuCount": 1, "volumeGb": 10},
  {"id": "res-vm", "name": "rv", "organizationId": "o", "nodeId": "n1", "status": "stopped", "statusReason": "user_stopped",
   "computeClass": "reserved", "gpuModelId": "h100", "gpuCount": 1, "cpuCores": 30, "ramGb": 300, "diskSizeGb": 1500}]}`

// preempted loads preemptFixture, has the agent report both interruptible
// workloads running, and restarts both reserved ones, which preempt them.
// It answers the heartbeat of the next sequence and the service.
func preempted(t *testing.T, st *store.Store) (func(ws ...agentapi.WorkloadReport) Report, *compute.Service) {
	t.Helper()
	ctx := context.Background()
	datasettest.Load(t, st, preemptFixture)
	cs := compute.New(st)
	svc := New(st, cs, nodeid.New(st), Options{KeysAccepted: true})
	seq := int64(0)
	hb := func(ws ...agentapi.WorkloadReport) Report {
		t.Helper()
		seq++
		rep, err := svc.ReportHeartbeat(ctx, Reporter{Caller: auth.SystemCaller()},
			agentapi.HeartbeatRequest{NodeName: "dgx-spot", AgentVersion: "2.7.0", Sequence: seq, Workloads: ws})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := hb(running("spot-pod", 0), running("spot-vm", 0)); ids(rep.Workloads) != "spot-pod:0:run spot-vm:0:run" {
		t.Fatalf("before: %s", ids(rep.Workloads))
	}
	o := datasettest.Caller(t, st, "o-op")
	for _, id := range []string{"res-pod", "res-vm"} {
		if res, err := cs.Restart(ctx, o, id); err != nil || res.VM.Status != models.VMDeploying {
			t.Fatalf("restart %s: %+v %v", id, res, err)
		}
	}
	return hb, cs
}

func running(id string, gen int) agentapi.WorkloadReport {
	return agentapi.WorkloadReport{ID: id, Generation: gen, State: agentapi.StateRunning}
}

// handedOver checks what a victim row says: stopped as preempted, tearing
// down as down says, holding no GPU (its preemptor took it) and never
// handed_over once its teardown is done.
func handedOver(t *testing.T, st *store.Store, id string, down bool) {
	t.Helper()
	checkHeld(t, st, id, down, 0)
	var vm models.VM
	storetest.Take(t, st, &vm, "vms", "id = ?", id)
	if vm.Status != models.VMStopped || vm.StatusReason != models.ReasonSpotPreempted || vm.HandedOver != down {
		t.Errorf("%s: %s (%s), handedOver %v, want stopped (%s), %v", id, vm.Status, vm.StatusReason, vm.HandedOver,
			models.ReasonSpotPreempted, down)
	}
}

// heldUUID is the UUID of the one GPU id holds.
func heldUUID(t *testing.T, st *store.Store, id string) string {
	t.Helper()
	var uuids []string
	storetest.Scan(t, st, &uuids, "SELECT uuid FROM gpus WHERE holder_vm_id = ?", id)
	if len(uuids) != 1 {
		t.Fatalf("%s holds %v", id, uuids)
	}
	return uuids[0]
}

// A preempted workload on an agent's node tears down there: it is stopped
// with tearingDown, its GPUs and host share already its preemptor's; the
// node is told stop (listing no GPUs: they are no longer its) beside the
// preemptor's run on them; a restart of it meanwhile answers the 409 of
// any teardown; its gone report clears the flag and releases nothing.
func TestPreemptedVictimIsToldStop(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		hb, cs := preempted(t, st)
		handedOver(t, st, "spot-pod", true)
		handedOver(t, st, "spot-vm", true)
		if a, b := heldUUID(t, st, "res-pod"), heldUUID(t, st, "res-vm"); a != "GPU-a" || b != "GPU-b" {
			t.Fatalf("the preemptors hold %s and %s", a, b)
		}
		// Nothing is held twice: the victims' host share and GPUs count for
		// their preemptors only.
		if v := storetest.Violations(t, st); v != nil {
			t.Errorf("violations: %v", v)
		}
		snap, err := st.ReadSnapshot(ctx, store.SnapshotScope{NodeIDs: []string{"n1"}})
		if err != nil || len(snap.HostShares) != 1 || snap.HostShares[0].ID != "res-vm" {
			t.Errorf("n1's host shares: %+v %v", snap, err)
		}
		var used int
		if err := st.InTx(ctx, func(tx *store.Txn) (err error) {
			used, err = st.QuotaGPUsUsed(tx, "g", "h100", "")
			return err
		}); err != nil || used != 0 {
			t.Errorf("organization g's quota counts %d GPUs (%v), want 0", used, err)
		}

		rep := hb(running("spot-pod", 0), running("spot-vm", 0))
		if ids(rep.Workloads) != "res-pod:1:run res-vm:1:run spot-pod:0:stop spot-vm:0:stop" {
			t.Fatalf("while the victims tear down: %s", ids(rep.Workloads))
		}
		for _, w := range rep.Workloads {
			want := map[string]string{"res-pod": "GPU-a", "res-vm": "GPU-b"}[w.ID]
			if (want == "" && len(w.GPUs) != 0) || (want != "" && (len(w.GPUs) != 1 || w.GPUs[0] != want)) {
				t.Errorf("%s is told GPUs %v, want %q", w.ID, w.GPUs, want)
			}
		}

		g := datasettest.Caller(t, st, "g-op")
		for id, code := range map[string]string{"spot-pod": compute.CodePodStopping, "spot-vm": compute.CodeVMNotReady} {
			_, err := cs.Restart(ctx, g, id)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != 409 || ae.Code != code {
				t.Errorf("restart of %s while it tears down: %v, want 409 %s", id, err, code)
			}
		}

		// The pod is gone; the VM is still shutting down.
		rep = hb(agentapi.WorkloadReport{ID: "spot-pod", State: agentapi.StateGone}, running("spot-vm", 0),
			agentapi.WorkloadReport{ID: "res-pod", Generation: 1, State: agentapi.StateStarting})
		if ids(rep.Workloads) != "res-pod:1:run res-vm:1:run spot-vm:0:stop" {
			t.Fatalf("after the pod's gone: %s", ids(rep.Workloads))
		}
		handedOver(t, st, "spot-pod", false)
		handedOver(t, st, "spot-vm", true)
		if a := heldUUID(t, st, "res-pod"); a != "GPU-a" {
			t.Fatalf("the gone report released the preemptor's GPU: res-pod holds %s", a)
		}
		if evs := events(t, st, "spot-pod"); evs != "agent-stage@0 spot-preempted@0 agent-gone@0" {
			t.Errorf("spot-pod events: %s", evs)
		}
		// Its teardown done, the pod restarts as any stopped pod (here
		// its node is full: it is refused for room, not for stopping).
		if _, err := cs.Restart(ctx, g, "spot-pod"); err == nil {
			t.Fatal("spot-pod restarted on a full node")
		} else if ae, _ := apierr.As(err); ae.Code == compute.CodePodStopping {
			t.Fatalf("spot-pod still stopping: %v", err)
		}
		if v := storetest.Violations(t, st); v != nil {
			t.Errorf("violations: %v", v)
		}
	})
}

// The sweep ends a preempted workload's teardown on a node that is not
// online past the grace as any other, and releases nothing: its GPUs are
// its preemptor's.
func TestSweepEndsPreemptedTeardown(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		preempted(t, st)
		later := time.Now().Add(time.Hour)
		storetest.Exec(t, st, "UPDATE nodes SET status = ? WHERE id = 'n1'", models.NodeOffline)
		n, err := sweep.New(st).ExpireTeardowns(context.Background(), later, time.Minute)
		if err != nil || n != 2 {
			t.Fatalf("sweep: %d %v", n, err)
		}
		handedOver(t, st, "spot-pod", false)
		handedOver(t, st, "spot-vm", false)
		if a, b := heldUUID(t, st, "res-pod"), heldUUID(t, st, "res-vm"); a != "GPU-a" || b != "GPU-b" {
			t.Fatalf("after the sweep the preemptors hold %s and %s", a, b)
		}
		if evs := events(t, st, "spot-vm"); evs != "agent-stage@0 spot-preempted@0 teardown-expired@0" {
			t.Errorf("spot-vm events: %s", evs)
		}
	})
}
