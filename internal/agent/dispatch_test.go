package agent_test

import (
	"errors"
	"os"
	"testing"

	"gpugraph/internal/agent"
	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/sim"
)

func ids(rs []agentapi.WorkloadReport) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID+"/"+r.State)
	}
	return out
}

// TestDispatch: VMs reach the VM side only and pods (and assignments of no
// kind, an older server's) the pod side only; each side is told its whole
// list every time, so one no longer listed is dropped there; the report is
// both sides', by id. Each simulated side fails what is not its kind, so
// a workload handed to the wrong side would show failed.
func TestDispatch(t *testing.T) {
	vms := &sim.Runtime{FailStart: []string{"pod-1", "old-1"}}
	pods := &sim.Runtime{FailStart: []string{"vm-1", "vm-2"}}
	d := agent.Dispatch{VMs: vms, Pods: pods}
	var _ agent.Runtime = d

	d.Assign([]agentapi.Assignment{
		{ID: "vm-2", Generation: 1, Kind: agentapi.KindVM},
		{ID: "pod-1", Generation: 3, Kind: agentapi.KindPod},
		{ID: "old-1", Generation: 1},
		{ID: "vm-1", Generation: 2, Kind: agentapi.KindVM},
	})
	d.Report() // the simulated runtimes walk a stage per report
	d.Report()
	d.Report()
	got := d.Report()
	want := []string{"old-1/running", "pod-1/running", "vm-1/running", "vm-2/running"}
	if !equal(ids(got), want) {
		t.Errorf("report %v, want %v", ids(got), want)
	}
	if g := ids(vms.Report()); !equal(g, []string{"vm-1/running", "vm-2/running"}) {
		t.Errorf("the VM side runs %v", g)
	}
	if g := ids(pods.Report()); !equal(g, []string{"old-1/running", "pod-1/running"}) {
		t.Errorf("the pod side runs %v", g)
	}

	// vm-2 and every pod are no longer listed: both sides drop theirs.
	d.Assign([]agentapi.Assignment{{ID: "vm-1", Generation: 2, Kind: agentapi.KindVM}})
	if g := ids(d.Report()); !equal(g, []string{"vm-1/running"}) {
		t.Errorf("after the list shrank: %v, want [vm-1/running]", g)
	}
	if g := ids(pods.Report()); len(g) != 0 {
		t.Errorf("the pod side still runs %v", g)
	}

	// The console is the VM side's; a VM side that keeps none answers
	// os.ErrNotExist.
	kept, err := vms.ConsoleTail("vm-1")
	if err != nil || len(kept) == 0 {
		t.Fatalf("the simulated VM side's console: %q, %v", kept, err)
	}
	if got, err := d.ConsoleTail("vm-1"); err != nil || string(got) != string(kept) {
		t.Errorf("ConsoleTail through Dispatch: %q, %v, want the VM side's %q", got, err, kept)
	}
	bare := agent.Dispatch{VMs: noConsole{vms}, Pods: pods}
	if _, err := bare.ConsoleTail("vm-1"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ConsoleTail with no console on the VM side: %v, want os.ErrNotExist", err)
	}

	// The GPUs passed through are the VM side's (none from one that
	// passes none through).
	g := agent.GPUIdentity{Index: 1, UUID: "GPU-1", Address: "0000:3B:00.0"}
	if got := (agent.Dispatch{VMs: passing{vms, []agent.GPUIdentity{g}}, Pods: pods}).PassedThroughGPUs(); len(got) != 1 || got[0] != g {
		t.Errorf("PassedThroughGPUs through Dispatch: %+v, want %+v", got, g)
	}
	if got := bare.PassedThroughGPUs(); got != nil {
		t.Errorf("PassedThroughGPUs with none on the VM side: %+v", got)
	}
}

// passing is a VM runtime that passed GPUs through.
type passing struct {
	agent.Runtime
	gpus []agent.GPUIdentity
}

func (p passing) PassedThroughGPUs() []agent.GPUIdentity { return p.gpus }

// noConsole is a runtime that keeps no console: only agent.Runtime's
// methods of the one it wraps.
type noConsole struct{ agent.Runtime }

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
