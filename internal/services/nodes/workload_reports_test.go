package nodes_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// handFixture: two nodes; a deploying VM and a running pod on dgx-hand, a
// deploying VM that stays so (for the provision timeout).
const handFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-wl", "name": "WL", "tenantId": 78}],
 "nodes": [{"id": "n-hand", "name": "dgx-hand", "clusterId": "c-wl", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
            "gpus": [{"id": "h0", "index": 0, "uuid": "GPU-h0", "modelId": "h100"}, {"id": "h1", "index": 1, "uuid": "GPU-h1", "modelId": "h100"},
                     {"id": "h2", "index": 2, "uuid": "GPU-h2", "modelId": "h100"}]},
           {"id": "n-other", "name": "dgx-other", "clusterId": "c-wl", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
            "gpus": [{"id": "o0", "index": 0, "uuid": "GPU-o0", "modelId": "h100"}]}],
 "vms": [{"id": "vm-dep", "name": "dep", "organizationId": "o-wl", "nodeId": "n-hand", "status": "deploying", "statusReason": "user_restarted",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["h0"], "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100},
         {"id": "pod-nofit", "name": "nofit", "organizationId": "o-wl", "nodeId": "n-hand", "status": "running", "capabilityTier": "pod",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["h1"], "volumeGb": 10}]
}`

// Workload reports sent by hand: only the reporting node's rows, of the
// generation they name, move; a pod whose GPU failed is not re-submitted;
// bad reports answer 400 naming the field.
func TestWorkloadReports(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if _, err := dataset.LoadFile(context.Background(), st, []byte(handFixture)); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(servertest.Checked(t, servertest.Handler(st, servertest.Options{}, servertest.Config{})))
		t.Cleanup(srv.Close)
		url := srv.URL
		hand, other := servertest.NodeCredential(t, st, "dgx-hand", "c-wl"), servertest.NodeCredential(t, st, "dgx-other", "c-wl")
		running := func(id string, gen int) agentapi.WorkloadReport {
			return agentapi.WorkloadReport{ID: id, Generation: gen, State: agentapi.StateRunning}
		}

		// What should run on each node.
		resp := servertest.HeartbeatAs(t, url, hand, "dgx-hand", nil)
		if got := servertest.Assigned(resp); got != "pod-nofit@0[GPU-h1] vm-dep@0[GPU-h0]" {
			t.Errorf("dgx-hand is told to run %q", got)
		}
		if got := servertest.Assigned(servertest.HeartbeatAs(t, url, other, "dgx-other", nil)); got != "" {
			t.Errorf("dgx-other is told to run %q, want nothing", got)
		}

		// Another node's agent cannot move dgx-hand's row.
		servertest.HeartbeatAs(t, url, other, "dgx-other", nil, running("vm-dep", 0))
		servertest.CheckVM(t, st, servertest.ReadVM(t, st, "vm-dep"), models.ReasonUserRestarted, 1)
		if vm := servertest.ReadVM(t, st, "vm-dep"); vm.Status != models.VMDeploying {
			t.Fatalf("vm-dep moved by another node's report: %s", vm.Status)
		}
		// A report of another generation is ignored.
		servertest.HeartbeatAs(t, url, hand, "dgx-hand", nil, running("vm-dep", 7))
		if vm := servertest.ReadVM(t, st, "vm-dep"); vm.Status != models.VMDeploying {
			t.Fatalf("vm-dep moved by a stale report: %s", vm.Status)
		}
		// Its own report of its generation moves it.
		servertest.HeartbeatAs(t, url, hand, "dgx-hand", nil, running("vm-dep", 0))
		vm := servertest.ReadVM(t, st, "vm-dep")
		if vm.Status != models.VMRunning {
			t.Fatalf("vm-dep after its agent's report: %s", vm.Status)
		}
		servertest.CheckVM(t, st, vm, models.ReasonUserRestarted, 1)
		servertest.CheckEvents(t, st, "vm-dep", "agent-running:deploying>running:agent:dgx-hand")

		// The pod's GPU fails as it loses its job: it keeps its GPU,
		// interrupted, and is not re-submitted onto a failed GPU.
		failed := []agentapi.HeartbeatGPU{{UUID: "GPU-h1", Health: "failed", FailedReason: "XID 79"}}
		resp = servertest.HeartbeatAs(t, url, hand, "dgx-hand", failed,
			agentapi.WorkloadReport{ID: "pod-nofit", State: agentapi.StateFailed, Message: "the pod's supervisor went away."})
		p := servertest.ReadVM(t, st, "pod-nofit")
		if p.Status != models.VMInterrupted || p.InterruptedAt == nil {
			t.Fatalf("pod-nofit: %s, interruptedAt %v", p.Status, p.InterruptedAt)
		}
		servertest.CheckVM(t, st, p, models.ReasonJobLost, 1)
		servertest.CheckEvents(t, st, "pod-nofit", "pod-job-lost:running>interrupted:agent:dgx-hand")
		if got := servertest.Assigned(resp); got != "vm-dep@0[GPU-h0]" {
			t.Errorf("after the job loss dgx-hand is told to run %q", got)
		}

		// Bad reports.
		for _, tc := range []struct {
			w    agentapi.WorkloadReport
			want string
		}{
			{agentapi.WorkloadReport{ID: "vm-dep", State: "sleeping"}, "is not one of starting, running, exited, failed"},
			{agentapi.WorkloadReport{ID: "vm-dep", State: "failed"}, "workloads[0].message is missing"},
			{agentapi.WorkloadReport{ID: "vm-dep", State: "failed", Message: "It broke. Then it broke again."}, "must be one sentence"},
			{agentapi.WorkloadReport{ID: "vm-dep", State: "failed", Message: "line\nbreak"}, "must be printable text"},
			{agentapi.WorkloadReport{ID: "vm-dep", State: "failed", Message: strings.Repeat("x", 301)}, "at most 300 bytes"},
			{agentapi.WorkloadReport{ID: "", State: "running"}, "workloads[0].id is missing"},
		} {
			code, body := servertest.PostAs(t, url+agentapi.HeartbeatPath, hand, servertest.HeartbeatBody("dgx-hand", nil, tc.w))
			if code != 400 || !strings.Contains(body, tc.want) {
				t.Errorf("report %+v: %d %s, want a 400 saying %q", tc.w, code, body, tc.want)
			}
		}
		if vm := servertest.ReadVM(t, st, "vm-dep"); vm.Status != models.VMRunning {
			t.Errorf("a refused report moved vm-dep: %s", vm.Status)
		}
	})
}

// The sweep fails a row that stays deploying past the provision timeout,
// with a sentence that says so, and releases its GPUs.
func TestProvisionTimeoutSweep(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if _, err := dataset.LoadFile(context.Background(), st, []byte(handFixture)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			sweep.NewRunner(sweep.New(st), sweep.Options{Grace: 50 * time.Millisecond, Interval: 20 * time.Millisecond,
				ProvisionTimeout: 200 * time.Millisecond}).Run(ctx)
		}()
		t.Cleanup(func() { cancel(); <-done })
		vm := servertest.WaitVM(t, st, nil, "vm-dep", models.VMFailed)
		servertest.CheckVM(t, st, vm, models.ReasonFailedToStartPrefix+"it was still deploying after 200ms; no node agent reported it running.", 0)
		servertest.CheckEvents(t, st, "vm-dep", "provision-timeout:deploying>failed:sweep:")
		if p := servertest.ReadVM(t, st, "pod-nofit"); p.Status != models.VMRunning {
			t.Errorf("the provision timeout touched a running pod: %s", p.Status)
		}
	})
}

// endsFixture: two running VMs and a running pod on dgx-ends.
const endsFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-end", "name": "End", "tenantId": 81}],
 "nodes": [{"id": "n-ends", "name": "dgx-ends", "clusterId": "c-end", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
            "gpus": [{"id": "e0", "index": 0, "uuid": "GPU-e0", "modelId": "h100"}, {"id": "e1", "index": 1, "uuid": "GPU-e1", "modelId": "h100"},
                     {"id": "e2", "index": 2, "uuid": "GPU-e2", "modelId": "h100"}]}],
 "vms": [{"id": "vm-off", "name": "off", "organizationId": "o-end", "nodeId": "n-ends", "status": "running",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["e0"], "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100},
         {"id": "vm-crash", "name": "crash", "organizationId": "o-end", "nodeId": "n-ends", "status": "running",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["e1"], "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100},
         {"id": "pod-crash", "name": "pod-crash", "organizationId": "o-end", "nodeId": "n-ends", "status": "running", "capabilityTier": "pod",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["e2"], "volumeGb": 10}]
}`

// A running VM's end, as its agent reports it: a guest that powered
// itself off (exited) is stopped with vm_exited; a VM whose process
// crashed (failed) is failed with the agent's sentence (vm-crashed); both
// release their GPU at once (the agent saw them end). A running pod that
// fails still loses its job and is re-submitted on its GPU.
func TestRunningVMEnds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if _, err := dataset.LoadFile(context.Background(), st, []byte(endsFixture)); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(servertest.Checked(t, servertest.Handler(st, servertest.Options{}, servertest.Config{})))
		t.Cleanup(srv.Close)
		cred := servertest.NodeCredential(t, st, "dgx-ends", "c-end")
		const crash = "QEMU was killed by signal 9 (killed)."
		servertest.HeartbeatAs(t, srv.URL, cred, "dgx-ends", nil,
			agentapi.WorkloadReport{ID: "vm-off", State: agentapi.StateExited, Message: "the guest powered itself off."},
			agentapi.WorkloadReport{ID: "vm-crash", State: agentapi.StateFailed, Message: crash},
			agentapi.WorkloadReport{ID: "pod-crash", State: agentapi.StateFailed, Message: "its process exited with status 2."})

		off := servertest.ReadVM(t, st, "vm-off")
		if off.Status != models.VMStopped || off.TearingDown {
			t.Errorf("vm-off: %s, tearingDown %v; want stopped, false", off.Status, off.TearingDown)
		}
		servertest.CheckVM(t, st, off, models.ReasonVMExited, 0)
		servertest.CheckEvents(t, st, "vm-off", "vm-exited:running>stopped:agent:dgx-ends")

		crashed := servertest.ReadVM(t, st, "vm-crash")
		if crashed.Status != models.VMFailed || crashed.TearingDown {
			t.Errorf("vm-crash: %s, tearingDown %v; want failed, false", crashed.Status, crashed.TearingDown)
		}
		servertest.CheckVM(t, st, crashed, "vm failed while running: QEMU was killed by signal 9 (killed).", 0)
		servertest.CheckEvents(t, st, "vm-crash", "vm-crashed:running>failed:agent:dgx-ends")

		p := servertest.ReadVM(t, st, "pod-crash")
		if p.Status != models.VMDeploying {
			t.Errorf("pod-crash: %s, want deploying (re-submitted on its GPU)", p.Status)
		}
		servertest.CheckVM(t, st, p, models.ReasonJobLost, 1)
		servertest.CheckEvents(t, st, "pod-crash", "pod-job-lost:running>interrupted:agent:dgx-ends", "pod-resubmit:interrupted>deploying:platform:")
		if v := storetest.Violations(t, st); v != nil {
			t.Errorf("violations: %v", v)
		}
	})
}

// A VM's reported endpoint becomes its endpointUrl (the node's runtime
// knows where it answers: a forwarded port); a pod's stays the platform's,
// another generation's report changes nothing, and a bad endpoint is a
// 400 naming the field that writes nothing.
func TestReportedEndpoint(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if _, err := dataset.LoadFile(context.Background(), st, []byte(handFixture)); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(servertest.Checked(t, servertest.Handler(st, servertest.Options{}, servertest.Config{})))
		t.Cleanup(srv.Close)
		hand := servertest.NodeCredential(t, st, "dgx-hand", "c-wl")
		report := func(id string, gen int, endpoint string) agentapi.WorkloadReport {
			return agentapi.WorkloadReport{ID: id, Generation: gen, State: agentapi.StateRunning, Endpoint: endpoint}
		}
		podBefore := servertest.ReadVM(t, st, "pod-nofit").EndpointURL

		servertest.HeartbeatAs(t, srv.URL, hand, "dgx-hand", nil, report("vm-dep", 7, "ssh://10.0.0.7:40007"))
		if got := servertest.ReadVM(t, st, "vm-dep").EndpointURL; got != "" {
			t.Errorf("another generation's endpoint was recorded: %q", got)
		}
		servertest.HeartbeatAs(t, srv.URL, hand, "dgx-hand", nil,
			report("vm-dep", 0, "ssh://10.0.0.7:40022"), report("pod-nofit", 0, "ssh://10.0.0.7:40023"))
		if got := servertest.ReadVM(t, st, "vm-dep").EndpointURL; got != "ssh://10.0.0.7:40022" {
			t.Errorf("vm-dep's endpointUrl %q, want the reported ssh://10.0.0.7:40022", got)
		}
		if got := servertest.ReadVM(t, st, "pod-nofit").EndpointURL; got != podBefore {
			t.Errorf("the pod's endpointUrl became %q, want the platform's %q", got, podBefore)
		}

		for _, tc := range []struct{ endpoint, want string }{
			{"10.0.0.7:40022", "workloads[0].endpoint \\\"10.0.0.7:40022\\\" is not an absolute URL with a host"},
			{"ftp://10.0.0.7:21", "workloads[0].endpoint \\\"ftp://10.0.0.7:21\\\" is not an ssh, http or https URL"},
			{"ssh://root:pw@10.0.0.7:22", "is not an absolute URL with a host (and no credentials)"},
			{"ssh://10.0.0.7:22/ x", "workloads[0].endpoint must be at most 2048 bytes of printable text without spaces"},
			{"https://" + strings.Repeat("a", 2048) + ".example", "must be at most 2048 bytes"},
		} {
			code, body := servertest.PostAs(t, srv.URL+agentapi.HeartbeatPath, hand,
				servertest.HeartbeatBody("dgx-hand", nil, report("vm-dep", 0, tc.endpoint)))
			if code != 400 || !strings.Contains(body, tc.want) {
				t.Errorf("endpoint %.40q: %d %s, want a 400 saying %q", tc.endpoint, code, body, tc.want)
			}
		}
		if got := servertest.ReadVM(t, st, "vm-dep").EndpointURL; got != "ssh://10.0.0.7:40022" {
			t.Errorf("a refused report changed vm-dep's endpointUrl to %q", got)
		}
	})
}
