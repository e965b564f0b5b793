package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/sim"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// Preemption on a node the real agent binary runs (simulated runtime), on
// both engines: the reserved pod's restart takes the interruptible pod's
// GPUs at once; the victim reads stopped with tearingDown, its restart
// answers 409 POD_STOPPING, the agent is told stop and reports it gone;
// and the agent starts the preemptor only after that: the victim's
// agent-gone comes in an earlier report than the preemptor's
// agent-running.
func TestAgentTearsDownPreemptedVictimFirst(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the agent binary")
	}
	bin := buildAgent(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(preemptE2EFixture(t))); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(servertest.Checked(t, servertest.Handler(st, servertest.Options{}, servertest.Config{})))
		t.Cleanup(srv.Close)
		a := startAgentArgs(t, bin, srv.URL, "dgx-pre", servertest.Enroll(t, st, "dgx-pre", "c-pre"), "--interval", "200ms",
			"--mock", "dgxh100", "--mock-start-delay", "0s", "--mock-stop-delay", "2s")
		defer a.stop(t)
		waitAgentReported(t, st, a, "n-pre")
		// The agent runs the victim: it reported it ready (the fixture's
		// row was booting).
		servertest.WaitVM(t, st, a.output, "spot-pre", models.VMRunning, func(vm *models.VM) bool { return vm.ProvisioningStage == agentapi.StageReady })

		if code, body := servertest.PostAs(t, srv.URL+"/v1/vms/res-pre/restart", "pre-op", ""); code != http.StatusOK {
			t.Fatalf("reserved restart: %d %s", code, body)
		}
		v := servertest.ReadVM(t, st, "spot-pre")
		if v.Status != models.VMStopped || !v.TearingDown {
			t.Fatalf("the victim after the preemption: %s, tearingDown %v", v.Status, v.TearingDown)
		}
		servertest.CheckVM(t, st, v, models.ReasonSpotPreempted, 0)
		if n := servertest.HeldGPUs(t, st, "res-pre"); n != 8 {
			t.Fatalf("the preemptor holds %d GPUs, want 8", n)
		}
		if code, body := servertest.PostAs(t, srv.URL+"/v1/vms/spot-pre/restart", "spot-op", ""); code != http.StatusConflict ||
			!strings.Contains(body, `"code":"POD_STOPPING"`) {
			t.Errorf("the victim's restart while it tears down: %d %s, want 409 POD_STOPPING", code, body)
		}

		servertest.WaitVM(t, st, a.output, "res-pre", models.VMRunning)
		v = servertest.WaitVM(t, st, a.output, "spot-pre", models.VMStopped, func(vm *models.VM) bool { return !vm.TearingDown })
		servertest.CheckVM(t, st, v, models.ReasonSpotPreempted, 0)
		if n := servertest.HeldGPUs(t, st, "res-pre"); n != 8 {
			t.Errorf("the preemptor holds %d GPUs after the victim's gone, want 8", n)
		}
		servertest.CheckEvents(t, st, "spot-pre", "spot-preempted:running>stopped:platform:preemption", "agent-gone:stopped>stopped:agent:dgx-pre")
		servertest.CheckEvents(t, st, "res-pre", "restart-deploy:stopped>deploying:user:*", "agent-running:deploying>running:agent:dgx-pre")
		var gone, ran int64
		storetest.Scan(t, st, &gone, "SELECT id FROM vm_events WHERE vm_id = ? AND transition = ?", "spot-pre", models.AgentGone)
		storetest.Scan(t, st, &ran, "SELECT id FROM vm_events WHERE vm_id = ? AND transition = ?", "res-pre", models.AgentRunning)
		if gone == 0 || ran <= gone {
			t.Errorf("the preemptor ran (event %d) before the victim was gone (event %d)\n%s", ran, gone, a.output())
		}
		if v := storetest.Violations(t, st); v != nil {
			t.Errorf("violations: %v", v)
		}
	})
}

// preemptE2EFixture is one simulated DGX H100 whose eight GPUs an
// interruptible pod of one organization runs on, and a stopped reserved
// pod of another that needs all eight.
func preemptE2EFixture(t *testing.T) string {
	m, err := sim.NewServer("dgxh100", "dgx-pre")
	if err != nil {
		t.Fatal(err)
	}
	var gpus, ids []string
	for i := range 8 {
		gpus = append(gpus, fmt.Sprintf(`{"id": "pre-g%d", "index": %d, "uuid": %q, "modelId": "h100"}`, i, i, m.Device(i).UUID))
		ids = append(ids, fmt.Sprintf(`"pre-g%d"`, i))
	}
	return `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-pre", "name": "Reserved", "tenantId": 81}, {"id": "g-pre", "name": "Spot", "tenantId": 82}],
 "apiKeys": [{"token": "pre-op", "organizationId": "o-pre", "permissions": ["compute.read", "compute.operate"]},
             {"token": "spot-op", "organizationId": "g-pre", "permissions": ["compute.read", "compute.operate"]}],
 "nodes": [{"id": "n-pre", "name": "dgx-pre", "clusterId": "c-pre", "status": "online", "agentVersion": "2.6.1", "cpuCores": 224, "ramGb": 2048, "diskGb": 27939,
            "gpus": [` + strings.Join(gpus, ",") + `]}],
 "vms": [{"id": "spot-pre", "createdAt": "2025-03-01T12:00:00Z", "name": "spot", "organizationId": "g-pre", "nodeId": "n-pre", "status": "running",
          "capabilityTier": "pod", "computeClass": "interruptible", "gpuModelId": "h100", "gpuCount": 8, "gpuIds": [` + strings.Join(ids, ",") + `],
          "provisioningStage": "booting", "volumeGb": 10, "imageUrl": "docker.io/library/busybox:1.36"},
         {"id": "res-pre", "createdAt": "2025-03-01T12:00:00Z", "name": "res", "organizationId": "o-pre", "nodeId": "n-pre", "status": "stopped",
          "statusReason": "user_stopped", "capabilityTier": "pod", "computeClass": "reserved", "gpuModelId": "h100", "gpuCount": 8,
          "volumeGb": 10, "imageUrl": "docker.io/library/busybox:1.36"}]
}`
}
