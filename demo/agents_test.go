package demo_test

import (
	"context"
	"testing"
	"time"

	"gpugraph/demo"
	"gpugraph/demo/agents"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The demo's in-process agents bring a restarted demo VM to running, and
// leave what the demo's restart outcomes rely on as it was: the offline
// node offline, the removed one removed, failed GPUs failed, old agent
// versions old, host figures and GPU rows unchanged.
func TestDemoAgentsRunRestartedVM(t *testing.T) {
	b, err := demo.JSON(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, string(b))
		ctx, cancel := context.WithCancel(context.Background())
		if ok, err := agents.Loaded(ctx, st); err != nil || !ok {
			t.Fatalf("agents.Loaded on the demo: %v, %v", ok, err)
		}
		wait, err := agents.Start(ctx, st, env.Srv.URL, agents.Options{Interval: 200 * time.Millisecond, StartDelay: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); wait() })
		gpusBefore := storetest.Count(t, st, "gpus", "")

		if code, body := env.Do("POST", "/v1/vms/vm-restart-ok-stopped/restart", "acme-operator", nil, nil); code != 200 {
			t.Fatalf("restart: %d %s", code, body)
		}
		vm := servertest.WaitVM(t, st, nil, "vm-restart-ok-stopped", models.VMRunning)
		servertest.CheckVM(t, st, vm, models.ReasonUserRestarted, 2)
		servertest.CheckEvents(t, st, vm.ID, "restart-deploy:stopped>deploying:user:*",
			"agent-running:deploying>running:agent:dgx-h200-01")

		var nodes []models.Node
		storetest.Scan(t, st, &nodes, "SELECT * FROM nodes ORDER BY id")
		for _, n := range nodes {
			want := models.NodeOnline
			switch n.Name {
			case "dgx-a100-03":
				want = models.NodeOffline
			case "dgx-a100-04":
				want = models.NodeRemoved
			}
			if n.Status != want {
				t.Errorf("node %s is %s, want %s", n.Name, n.Status, want)
			}
			if n.Name == "dgx-h100-04" && n.AgentVersion != "2.3.9" || n.Name == "mi300x-01" && n.AgentVersion != "2.5.3" {
				t.Errorf("node %s reports agent %s, the demo's version changed", n.Name, n.AgentVersion)
			}
			if n.Name == "dgx-h200-02" && (n.CPUCores != 112 || n.RAMGb != 2048) {
				t.Errorf("node %s host figures changed: %d cores, %d GB", n.Name, n.CPUCores, n.RAMGb)
			}
		}
		var failed []models.GPU
		storetest.Scan(t, st, &failed, "SELECT * FROM gpus WHERE health = ? ORDER BY id", models.GPUFailed)
		if len(failed) != 2 || failed[0].ID != "dgx-a100-02-gpu-5" || failed[1].ID != "dgx-h100-02-gpu-3" {
			t.Errorf("failed GPUs after the agents reported: %+v", failed)
		}
		gpusAfter := storetest.Count(t, st, "gpus", "")
		if gpusAfter != gpusBefore {
			t.Errorf("GPU rows: %d before the agents, %d after", gpusBefore, gpusAfter)
		}
	})
}
