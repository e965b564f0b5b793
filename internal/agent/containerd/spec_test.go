package containerd

import (
	"reflect"
	"testing"

	"gpugraph/internal/agent/agentapi"
)

// TestFromAssignment: the wire's fields land in the Spec; an older
// server's assignment is a run; a reboot of a pod is a recreate.
func TestFromAssignment(t *testing.T) {
	got := FromAssignment(agentapi.Assignment{ID: "p", Generation: 3, Kind: agentapi.KindPod, Image: "img", GPUs: []string{"GPU-a"},
		CPUCores: 4, RAMGb: 2, Action: agentapi.ActionReboot,
		Volume: &agentapi.Volume{ID: "v", SizeGb: 50, MountPath: "/workspace", Fresh: true}})
	want := Spec{ID: "p", Generation: 3, Action: ActionRecreate, Image: "img", GPUs: []string{"GPU-a"}, CPUs: 4, MemoryBytes: 2 << 30,
		Volume: Volume{ID: "v", MountPath: "/workspace", Fresh: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got := FromAssignment(agentapi.Assignment{ID: "old", Generation: 1, GPUs: []string{"GPU-b"}}); got.Action != ActionRun || got.Unsupported != "" {
		t.Fatalf("older server's assignment: %+v", got)
	}
	if got := FromAssignment(agentapi.Assignment{ID: "vm", Generation: 1, Kind: agentapi.KindVM, Action: agentapi.ActionStop}); got.Unsupported != "" {
		t.Fatalf("a VM's stop must be carried out (nothing to tear down): %+v", got)
	}
}
