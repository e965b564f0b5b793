package agent

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/sim"
)

// The exporter labels a GPU with the VM or pod the server placed on it, from
// the heartbeat answer's assignments, and leaves the labels empty on a GPU
// nothing holds, as DCGM exporter does.
func TestExporterLabelsGPUsWithTheirWorkload(t *testing.T) {
	m, err := sim.NewServer("dgxh100", "node-x")
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := Discover(m, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	book := &assignmentBook{}
	book.set([]agentapi.Assignment{{ID: "vm-a", Generation: 1, GPUs: []string{gpus[0].UUID, gpus[1].UUID}}})
	e := &exporter{gpus: gpus, health: NewHealthState(gpus, testLogger(t)), hostname: "node-x", assignments: book.get, log: testLogger(t)}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e)
	n, err := testutil.GatherAndCount(reg, "DCGM_FI_DEV_GPU_UTIL")
	if err != nil || n != len(gpus) {
		t.Fatalf("%d utilization series for %d GPUs: %v", n, len(gpus), err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]string{}
	for _, mf := range mfs {
		if mf.GetName() != "DCGM_FI_DEV_GPU_UTIL" {
			continue
		}
		for _, s := range mf.GetMetric() {
			var uuid, pod string
			for _, l := range s.GetLabel() {
				switch l.GetName() {
				case "UUID":
					uuid = l.GetValue()
				case "pod":
					pod = l.GetValue()
				}
			}
			pods[uuid] = pod
		}
	}
	for i, g := range gpus {
		want := ""
		if i < 2 {
			want = "vm-a"
		}
		if pods[g.UUID] != want {
			t.Errorf("GPU %d (%s): pod %q, want %q", i, g.UUID, pods[g.UUID], want)
		}
	}
	book.set(nil)
	if strings.Contains(gatherText(t, reg), `pod="vm-a"`) {
		t.Error("the pod label outlived its assignment")
	}
}

func gatherText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				b.WriteString(l.GetName() + `="` + l.GetValue() + `" `)
			}
		}
	}
	return b.String()
}
