package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/sim"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The node agent binary runs what the server places on its node, end to
// end on both engines: a restarted VM goes deploying → running within five
// heartbeats (its provisioning stages one a heartbeat); --mock-fail-start fails a VM's start with the agent's
// sentence; --mock-exit stops a running VM (vm_exited) and makes a pod lose
// its job, after which the platform re-submits it and it runs again.
func TestAgentRunsWorkloads(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	if testing.Short() {
		t.Skip("builds and runs the agent binary")
	}
	bin := buildAgent(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(workloadsFixture(t))); err != nil {
			t.Fatal(err)
		}
		hb := &heartbeatWatch{st: st, vm: "vm-up"}
		srv := httptest.NewServer(hb.wrap(servertest.Handler(st, servertest.Options{}, servertest.Config{})))
		t.Cleanup(srv.Close)

		a := startAgentArgs(t, bin, srv.URL, "dgx-wl", servertest.Enroll(t, st, "dgx-wl", "c-wl"), "--interval", "300ms", "--mock", "dgxh100",
			"--mock-start-delay", "0s", "--mock-fail-start", "vm-bad", "--mock-exit", "vm-exit", "--mock-exit", "pod-lost")
		defer a.stop(t)

		// The running VM exits by itself: stopped, vm_exited, GPU released.
		v := servertest.WaitVM(t, st, a.output, "vm-exit", models.VMStopped)
		servertest.CheckVM(t, st, v, models.ReasonVMExited, 0)
		servertest.CheckEvents(t, st, "vm-exit", "vm-exited:running>stopped:agent:dgx-wl")

		// The pod loses its job, is re-submitted on its GPU and runs again.
		p := servertest.WaitVM(t, st, a.output, "pod-lost", models.VMRunning, func(vm *models.VM) bool { return vm.Generation == 1 })
		servertest.CheckVM(t, st, p, models.ReasonJobLost, 1)
		servertest.CheckEvents(t, st, "pod-lost",
			"pod-job-lost:running>interrupted:agent:dgx-wl",
			"pod-resubmit:interrupted>deploying:platform:",
			"agent-running:deploying>running:agent:dgx-wl")

		// A restart deploys on the node; the agent runs it within five
		// heartbeats that began after the restart answered: one hears of
		// it, three report its stages (one a heartbeat), one running.
		if code, body := servertest.PostAs(t, srv.URL+"/v1/vms/vm-up/restart", "wl-op", ""); code != 200 {
			t.Fatalf("restart vm-up: %d %s", code, body)
		}
		after := hb.started.Load()
		v = servertest.WaitVM(t, st, a.output, "vm-up", models.VMRunning)
		// The watch notes the heartbeat once its handler has returned,
		// which may be just after the row reads running here.
		for i := 0; i < 200 && hb.runningAt.Load() == 0; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if n := hb.runningAt.Load(); n == 0 || n-after > 5 {
			t.Errorf("vm-up running at heartbeat %d, the restart answered after heartbeat %d: want within five", n, after)
		}
		servertest.CheckVM(t, st, v, models.ReasonUserRestarted, 2)
		servertest.CheckEvents(t, st, "vm-up", "restart-deploy:stopped>deploying:user:*",
			"agent-running:deploying>running:agent:dgx-wl")

		// A start that fails: failed, with the agent's sentence, GPUs released.
		if code, body := servertest.PostAs(t, srv.URL+"/v1/vms/vm-bad/restart", "wl-op", ""); code != 200 {
			t.Fatalf("restart vm-bad: %d %s", code, body)
		}
		v = servertest.WaitVM(t, st, a.output, "vm-bad", models.VMFailed)
		servertest.CheckVM(t, st, v, models.ReasonFailedToStartPrefix+sim.FailStartMessage, 0)
		servertest.CheckEvents(t, st, "vm-bad", "restart-deploy:stopped>deploying:user:*", "agent-failed-start:deploying>failed:agent:dgx-wl")
	})
}

func buildAgent(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agent")
	if out, err := exec.Command("go", "build", "-o", bin, "gpugraph/cmd/agent").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/agent: %v\n%s", err, out)
	}
	return bin
}

// heartbeatWatch numbers the heartbeats as they begin and notes the first
// one after which vm has an agent-running event.
type heartbeatWatch struct {
	st        *store.Store
	vm        string
	started   atomic.Int64
	runningAt atomic.Int64
}

func (h *heartbeatWatch) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != agentapi.HeartbeatPath {
			next.ServeHTTP(w, r)
			return
		}
		n := h.started.Add(1)
		next.ServeHTTP(w, r)
		if h.runningAt.Load() != 0 {
			return
		}
		evs, err := h.st.EventsAfter(r.Context(), "o-wl", []string{h.vm}, 0, 100)
		if err != nil {
			return
		}
		for _, e := range evs {
			if e.Transition == models.AgentRunning {
				h.runningAt.CompareAndSwap(0, n)
			}
		}
	})
}

func workloadsFixture(t *testing.T) string {
	return `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-wl", "name": "WL", "tenantId": 78}],
 "apiKeys": [{"token": "wl-op", "organizationId": "o-wl", "permissions": ["compute.read", "compute.operate"]}],
 "nodes": [{"id": "n-wl", "name": "dgx-wl", "clusterId": "c-wl", "status": "online", "agentVersion": "2.6.1", "cpuCores": 224, "ramGb": 2048, "diskGb": 27939,
            "gpus": [` + simGPUs(t, "dgx-wl", "wl-g") + `]}],
 "vms": [{"id": "vm-up", "name": "up", "organizationId": "o-wl", "nodeId": "n-wl", "status": "stopped", "statusReason": "user_stopped",
          "gpuModelId": "h100", "gpuCount": 2, "cpuCores": 16, "ramGb": 128, "diskSizeGb": 200},
         {"id": "vm-bad", "name": "bad", "organizationId": "o-wl", "nodeId": "n-wl", "status": "stopped", "statusReason": "user_stopped",
          "gpuModelId": "h100", "gpuCount": 1, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100},
         {"id": "vm-exit", "name": "exit", "organizationId": "o-wl", "nodeId": "n-wl", "status": "running",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["wl-g7"], "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100},
         {"id": "pod-lost", "name": "lost", "organizationId": "o-wl", "nodeId": "n-wl", "status": "running", "capabilityTier": "pod",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["wl-g6"], "volumeGb": 10}]
}`
}

// startAgentArgs runs the agent binary as node with its one-time
// bootstrap token and args.
func startAgentArgs(t *testing.T, bin, url, node, bootstrapToken string, args ...string) *agentProc {
	t.Helper()
	return runAgent(t, bin, withBootstrapToken(bootstrapToken), append([]string{"--server", url, "--node-name", node}, args...)...)
}

// simGPUs is the fixture's GPU list of node name as --mock dgxh100
// simulates it (8 H100s, the simulator's UUIDs), their ids prefix0 … prefix7.
func simGPUs(t *testing.T, name, prefix string) string {
	t.Helper()
	m, err := sim.NewServer("dgxh100", name)
	if err != nil {
		t.Fatal(err)
	}
	gpus := make([]string, 8)
	for i := range gpus {
		gpus[i] = fmt.Sprintf(`{"id": "%s%d", "index": %d, "uuid": %q, "modelId": "h100"}`, prefix, i, i, m.Device(i).UUID)
	}
	return strings.Join(gpus, ",")
}
