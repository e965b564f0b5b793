package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/sim"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/scheduler"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The restart seed's sentences on the node, with the real agent binary
// (simulated runtime) on both engines: a running VM's restart is a reboot
// and a running pod's a recreate, each a new generation the agent
// acknowledges (agent-restarted, with that generation, in the event log);
// a stop holds the row's GPUs while the agent tears it down (tearingDown,
// restart answers 409 POD_STOPPING for the pod and VM_NOT_READY for the
// VM), a create that needs those GPUs waits pending, and the agent's gone
// report frees them and wakes the scheduler, which places it.
func TestAgentRestartsAndTearsDown(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	if testing.Short() {
		t.Skip("builds and runs the agent binary")
	}
	bin := buildAgent(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		if _, err := dataset.LoadFile(ctx, st, []byte(teardownFixture(t))); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(servertest.Checked(t, servertest.Handler(st, servertest.Options{}, servertest.Config{})))
		t.Cleanup(srv.Close)
		// Only the event notifications wake this scheduler in time: its
		// timer is longer than the test.
		scheduled := make(chan struct{})
		go func() {
			defer close(scheduled)
			scheduler.NewRunner(scheduler.New(st, compute.New(st)), scheduler.Options{Interval: time.Hour}).Run(ctx)
		}()
		t.Cleanup(func() { cancel(); <-scheduled })

		a := startAgentArgs(t, bin, srv.URL, "dgx-td", servertest.Enroll(t, st, "dgx-td", "c-td"), "--interval", "200ms",
			"--mock", "dgxh100", "--mock-start-delay", "0s", "--mock-stop-delay", "3s")
		defer a.stop(t)
		waitAgentReported(t, st, a, "n-td")

		// Reboot and recreate: a new generation each, acknowledged by the
		// agent with that generation.
		for _, c := range []struct{ id, action string }{{"vm-run", models.ActionReboot}, {"pod-run", models.ActionRecreate}} {
			before := servertest.ReadVM(t, st, c.id).Generation
			if code, body := servertest.PostAs(t, srv.URL+"/v1/vms/"+c.id+"/restart", "td-op", ""); code != http.StatusOK {
				t.Fatalf("restart %s: %d %s", c.id, code, body)
			}
			if vm := servertest.ReadVM(t, st, c.id); vm.Generation != before+1 || vm.Action != c.action || vm.Status != models.VMRunning {
				t.Errorf("%s after its restart: generation %d (was %d), action %q, %s; want %d, %s, running",
					c.id, vm.Generation, before, vm.Action, vm.Status, before+1, c.action)
			}
			servertest.WaitVM(t, st, a.output, c.id, models.VMRunning, func(vm *models.VM) bool { return vm.Action == models.ActionRun })
			servertest.CheckEvents(t, st, c.id, "restart-reboot:running>running:user:*", "agent-restarted:running>running:agent:dgx-td")
			if g := lastEventGeneration(t, st, c.id); g != before+1 {
				t.Errorf("%s: agent-restarted names generation %d, want %d", c.id, g, before+1)
			}
		}

		// A stop holds what the row held until the agent says it is gone.
		for _, id := range []string{"pod-stop", "vm-stop"} {
			if code, body := servertest.PostAs(t, srv.URL+"/v1/vms/"+id+"/stop", "td-op", ""); code != http.StatusOK ||
				!strings.Contains(body, `"status":"stopped"`) || !strings.Contains(body, `"tearingDown":true`) {
				t.Fatalf("stop %s: %d %s, want stopped with tearingDown true", id, code, body)
			}
		}
		servertest.CheckVM(t, st, servertest.ReadVM(t, st, "pod-stop"), models.ReasonUserStopped, 4)
		servertest.CheckVM(t, st, servertest.ReadVM(t, st, "vm-stop"), models.ReasonUserStopped, 1)
		for id, want := range map[string]string{"pod-stop": `"code":"POD_STOPPING"`, "vm-stop": `"code":"VM_NOT_READY"`} {
			if code, body := servertest.PostAs(t, srv.URL+"/v1/vms/"+id+"/restart", "td-op", ""); code != http.StatusConflict || !strings.Contains(body, want) {
				t.Errorf("restart %s while it tears down: %d %s, want 409 %s", id, code, body, want)
			}
		}
		// One GPU is free now (the stopped rows still hold five): a
		// create of four waits for the teardown.
		code, body := servertest.PostAs(t, srv.URL+"/v1/vms", "td-op",
			`{"name": "next", "gpuModelId": "h100", "gpuCount": 4, "capabilityTier": "pod", "imageUrl": "docker.io/library/busybox:1.36", "volumeGb": 10}`)
		if code != http.StatusCreated || !strings.Contains(body, `"status":"pending"`) {
			t.Fatalf("create while the GPUs tear down: %d %s, want 201 pending", code, body)
		}
		next := strings.SplitN(strings.SplitN(body, `"id":"`, 2)[1], `"`, 2)[0]

		for _, id := range []string{"pod-stop", "vm-stop"} {
			v := servertest.WaitVM(t, st, a.output, id, models.VMStopped, func(vm *models.VM) bool { return !vm.TearingDown })
			servertest.CheckVM(t, st, v, models.ReasonUserStopped, 0)
			servertest.CheckEvents(t, st, id, "user-stop:running>stopped:user:*", "agent-gone:stopped>stopped:agent:dgx-td")
		}
		servertest.WaitVM(t, st, a.output, next, models.VMRunning)
		servertest.CheckEvents(t, st, next, "create-queued:pending>pending:user:*", "queue-placed:pending>deploying:scheduler:*",
			"agent-running:deploying>running:agent:dgx-td")
		if v := storetest.Violations(t, st); v != nil {
			t.Errorf("violations: %v", v)
		}
	})
}

// waitAgentReported waits until an agent has reported for node id.
func waitAgentReported(t *testing.T, st *store.Store, a *agentProc, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n models.Node
		storetest.Take(t, st, &n, "nodes", "id = ?", id)
		if n.AgentReportedAt != nil && n.AgentVersion != "2.6.1" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no agent report for %s in 20s\n%s", id, a.output())
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// lastEventGeneration is the generation of id's last event.
func lastEventGeneration(t *testing.T, st *store.Store, id string) int {
	t.Helper()
	vm := servertest.ReadVM(t, st, id)
	evs, err := st.EventsAfter(context.Background(), vm.OrganizationID, []string{id}, 0, 100)
	if err != nil || len(evs) == 0 {
		t.Fatalf("events of %s: %v %v", id, evs, err)
	}
	if g := evs[len(evs)-1].Generation; g != nil {
		return *g
	}
	return -1
}

// teardownFixture is one simulated DGX H100 (8 GPUs) running a VM and a
// pod to restart, and a pod and a VM to stop: seven GPUs held, one free.
func teardownFixture(t *testing.T) string {
	m, err := sim.NewServer("dgxh100", "dgx-td")
	if err != nil {
		t.Fatal(err)
	}
	var gpus []string
	for i := range 8 {
		gpus = append(gpus, fmt.Sprintf(`{"id": "td-g%d", "index": %d, "uuid": %q, "modelId": "h100"}`, i, i, m.Device(i).UUID))
	}
	return `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-td", "name": "TD", "tenantId": 79}],
 "apiKeys": [{"token": "td-op", "organizationId": "o-td", "permissions": ["compute.read", "compute.operate"]}],
 "nodes": [{"id": "n-td", "name": "dgx-td", "clusterId": "c-td", "status": "online", "agentVersion": "2.6.1", "cpuCores": 224, "ramGb": 2048, "diskGb": 27939,
            "gpus": [` + strings.Join(gpus, ",") + `]}],
 "vms": [{"id": "vm-run", "createdAt": "2025-03-01T12:00:00Z", "name": "run", "organizationId": "o-td", "nodeId": "n-td", "status": "running",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["td-g0"], "cpuCores": 16, "ramGb": 128, "diskSizeGb": 200},
         {"id": "pod-run", "createdAt": "2025-03-01T12:00:00Z", "name": "pod-run", "organizationId": "o-td", "nodeId": "n-td", "status": "running", "capabilityTier": "pod",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["td-g1"], "volumeGb": 10, "imageUrl": "docker.io/library/busybox:1.36"},
         {"id": "pod-stop", "createdAt": "2025-03-01T12:00:00Z", "name": "pod-stop", "organizationId": "o-td", "nodeId": "n-td", "status": "running", "capabilityTier": "pod",
          "gpuModelId": "h100", "gpuCount": 4, "gpuIds": ["td-g2", "td-g3", "td-g4", "td-g5"], "volumeGb": 10, "imageUrl": "docker.io/library/busybox:1.36"},
         {"id": "vm-stop", "createdAt": "2025-03-01T12:00:00Z", "name": "vm-stop", "organizationId": "o-td", "nodeId": "n-td", "status": "running",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["td-g6"], "cpuCores": 16, "ramGb": 128, "diskSizeGb": 200}]
}`
}
