package sim

import (
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
)

func TestRuntime(t *testing.T) {
	now := time.Unix(0, 0)
	m := &Runtime{StartDelay: time.Second, FailStart: []string{"bad"}, Exit: []string{"crash"}, Clock: func() time.Time { return now }}
	states := func() map[string]string {
		out := map[string]string{}
		for _, r := range m.Report() {
			out[r.ID] = r.State + "@" + string(rune('0'+r.Generation)) + "/" + r.ProvisioningStage
		}
		return out
	}
	m.Assign([]agentapi.Assignment{{ID: "ok", Generation: 1}, {ID: "bad", Generation: 1}, {ID: "crash", Generation: 1}})
	if got := states(); got["ok"] != "starting@1/pulling_image" || got["bad"] != "failed@1/" || got["crash"] != "starting@1/pulling_image" {
		t.Fatalf("at once: %v", got)
	}
	// One stage a report, so the server hears each; booting lasts until
	// the start delay has passed.
	for _, want := range []string{"creating_volume", "booting", "booting"} {
		if got := states(); got["ok"] != "starting@1/"+want {
			t.Fatalf("starting: %v, want stage %s", got, want)
		}
	}
	now = now.Add(time.Second)
	if got := states(); got["ok"] != "running@1/ready" || got["crash"] != "running@1/ready" {
		t.Fatalf("after the start delay: %v", got)
	}
	if got := states(); got["ok"] != "running@1/ready" || got["crash"] != "exited@1/ready" {
		t.Fatalf("once reported running: %v", got)
	}
	// The server re-submits crash (generation 2) and drops ok: crash walks
	// the stages again, runs and does not exit twice; ok is no longer
	// reported.
	m.Assign([]agentapi.Assignment{{ID: "crash", Generation: 2}, {ID: "bad", Generation: 1}})
	now = now.Add(time.Second)
	var got map[string]string
	for range 4 {
		got = states()
	}
	if len(got) != 2 || got["crash"] != "running@2/ready" || got["bad"] != "failed@1/" {
		t.Fatalf("after re-submission: %v", got)
	}
}

// A reboot (recreate) is a new generation that starts over; a stop is gone
// after StopDelay, at once for a run it never had, and stays reported gone
// while assigned.
func TestRuntimeActions(t *testing.T) {
	now := time.Unix(0, 0)
	m := &Runtime{StopDelay: 2 * time.Second, Clock: func() time.Time { return now }}
	states := func() map[string]string {
		out := map[string]string{}
		for _, r := range m.Report() {
			out[r.ID] = r.State + "@" + string(rune('0'+r.Generation))
		}
		return out
	}
	// A start walks the three stages a report each before it runs.
	settle := func() map[string]string {
		var got map[string]string
		for range 4 {
			got = states()
		}
		return got
	}
	m.Assign([]agentapi.Assignment{{ID: "vm", Generation: 1}, {ID: "pod", Generation: 1}})
	if got := settle(); got["vm"] != "running@1" || got["pod"] != "running@1" {
		t.Fatalf("started: %v", got)
	}
	m.Assign([]agentapi.Assignment{{ID: "vm", Generation: 2, Action: agentapi.ActionReboot},
		{ID: "pod", Generation: 1, Action: agentapi.ActionStop}, {ID: "never", Generation: 3, Action: agentapi.ActionStop}})
	if got := settle(); got["vm"] != "running@2" || got["pod"] != "running@1" || got["never"] != "gone@3" {
		t.Fatalf("told reboot and stop: %v", got)
	}
	now = now.Add(2 * time.Second)
	m.Assign([]agentapi.Assignment{{ID: "vm", Generation: 2, Action: agentapi.ActionReboot},
		{ID: "pod", Generation: 1, Action: agentapi.ActionStop}})
	if got := states(); got["pod"] != "gone@1" || len(got) != 2 {
		t.Fatalf("after the stop delay: %v", got)
	}
	if got := states(); got["pod"] != "gone@1" {
		t.Fatalf("still assigned: %v", got)
	}
}

// A run does not start on a GPU that a workload told stop still uses: a
// preempted workload's stop lists no GPUs (the server gave them to its
// preemptor), so the runtime goes by the GPUs that workload's run had.
// Runs on other GPUs start at once.
func TestRuntimeRunWaitsForStoppingGPUs(t *testing.T) {
	now := time.Unix(0, 0)
	m := &Runtime{StopDelay: 2 * time.Second, Clock: func() time.Time { return now }}
	states := func() string {
		out := ""
		for _, r := range m.Report() {
			out += r.ID + "=" + r.State + "/" + r.ProvisioningStage + " "
		}
		return out
	}
	m.Assign([]agentapi.Assignment{{ID: "spot", Generation: 1, GPUs: []string{"GPU-a", "GPU-b"}}})
	for range 4 {
		states()
	}
	if got := states(); got != "spot=running/ready " {
		t.Fatalf("started: %s", got)
	}
	pass := []agentapi.Assignment{{ID: "spot", Generation: 1, Action: agentapi.ActionStop, GPUs: []string{}},
		{ID: "res", Generation: 1, GPUs: []string{"GPU-b"}}, {ID: "other", Generation: 1, GPUs: []string{"GPU-c"}}}
	m.Assign(pass)
	for i := range 3 {
		want := "other=starting/" + startingStages[i] + " res=starting/ spot=running/ready "
		if got := states(); got != want {
			t.Fatalf("while spot tears down, report %d: %s, want %s", i, got, want)
		}
	}
	now = now.Add(2 * time.Second)
	m.Assign(pass)
	// res is read before spot turns gone in this report; it starts in the
	// next one.
	if got := states(); got != "other=running/ready res=starting/ spot=gone/ready " {
		t.Fatalf("once spot is gone: %s", got)
	}
	if got := states(); got != "other=running/ready res=starting/pulling_image spot=gone/ready " {
		t.Fatalf("the report after: %s", got)
	}
	// A dropped workload is gone from the runtime at once: it holds nothing.
	m.Assign([]agentapi.Assignment{{ID: "x", Generation: 1, GPUs: []string{"GPU-c"}}})
	if got := states(); got != "x=starting/pulling_image " {
		t.Fatalf("after other was dropped: %s", got)
	}
}
