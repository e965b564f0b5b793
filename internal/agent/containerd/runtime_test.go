package containerd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/errdefs"
	"github.com/containerd/containerd/namespaces"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/containerd/containerdtest"
)

type fixture struct {
	rt      *Runtime
	d       *containerdtest.Daemon
	image   string
	volumes string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	d := containerdtest.Start(t)
	img := containerdtest.BusyboxImage(t, d)
	vols := t.TempDir()
	rt, err := New(Config{Client: d.Client, Namespace: containerdtest.Namespace, VolumeRoot: vols, StopGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return &fixture{rt: rt, d: d, image: img, volumes: vols}
}

// wait polls the runtime's report until id reports gen in state, and
// answers that report.
func (f *fixture) wait(t *testing.T, id string, gen int, state string) agentapi.WorkloadReport {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last []agentapi.WorkloadReport
	for time.Now().Before(deadline) {
		last = f.rt.Report()
		for _, w := range last {
			if w.ID == id && w.Generation == gen && w.State == state {
				return w
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s generation %d never reported %s; last report %+v", id, gen, state, last)
	return agentapi.WorkloadReport{}
}

func sh(script string) []string { return []string{"sh", "-c", script} }

// TestGPUEnvironment: the pod sees its GPUs as NVIDIA's toolkit reads
// them (no GPU on this host, so the environment is what is checked), the
// CDI names are in the annotation, CPU and memory are cgroup limits.
func TestGPUEnvironment(t *testing.T) {
	f := newFixture(t)
	f.rt.Apply([]Spec{{ID: "pod-env", Generation: 1, Action: ActionRun, Image: f.image,
		GPUs: []string{"GPU-11111111-2222-3333-4444-555555555555", "GPU-66666666-7777-8888-9999-000000000000"},
		CPUs: 1.5, MemoryBytes: 256 << 20, Volume: Volume{ID: "vol-env"},
		Args: sh("env > /workspace/env.txt")}})
	f.wait(t, "pod-env", 1, agentapi.StateExited)
	env, err := os.ReadFile(filepath.Join(f.volumes, "vol-env", "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(env), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	want := map[string]string{
		"NVIDIA_VISIBLE_DEVICES": "GPU-11111111-2222-3333-4444-555555555555,GPU-66666666-7777-8888-9999-000000000000",
		"GPUGRAPH_WORKLOAD_ID":   "pod-env",
		"GPUGRAPH_GENERATION":    "1",
		"PATH":                   "/bin",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q in the container, want %q", k, got[k], v)
		}
	}

	ctx := namespaces.WithNamespace(context.Background(), containerdtest.Namespace)
	c, err := f.d.Client.LoadContainer(ctx, "pod-env")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a, w := spec.Annotations[CDIAnnotation], "nvidia.com/gpu=GPU-11111111-2222-3333-4444-555555555555,nvidia.com/gpu=GPU-66666666-7777-8888-9999-000000000000"; a != w {
		t.Errorf("annotation %s = %q, want %q", CDIAnnotation, a, w)
	}
	res := spec.Linux.Resources
	if *res.CPU.Quota != 150_000 || *res.CPU.Period != 100_000 || *res.Memory.Limit != 256<<20 {
		t.Errorf("limits: cpu quota %d period %d, memory %d; want 150000, 100000, %d", *res.CPU.Quota, *res.CPU.Period, *res.Memory.Limit, 256<<20)
	}
}

// TestNoGPUs: a pod without GPUs gets NVIDIA_VISIBLE_DEVICES=void, so an
// image that says "all" is not given the node's GPUs.
func TestNoGPUs(t *testing.T) {
	f := newFixture(t)
	f.rt.Apply([]Spec{{ID: "pod-cpu", Generation: 1, Action: ActionRun, Image: f.image,
		Args: sh(`test "$NVIDIA_VISIBLE_DEVICES" = void`)}})
	f.wait(t, "pod-cpu", 1, agentapi.StateExited)
}

// TestRecreateKeepsWorkspace: a file written in /workspace survives a
// recreate, one written elsewhere in the container is gone; a fresh
// volume starts empty.
func TestRecreateKeepsWorkspace(t *testing.T) {
	f := newFixture(t)
	vol := Volume{ID: "vol-1"}
	f.rt.Apply([]Spec{{ID: "pod-1", Generation: 1, Action: ActionRun, Image: f.image, Volume: vol,
		Args: sh("echo kept > /workspace/a && echo lost > /etc/b && sleep 600")}})
	f.wait(t, "pod-1", 1, agentapi.StateRunning)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(f.volumes, "vol-1", "a")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("generation 1 never wrote /workspace/a")
		}
		time.Sleep(10 * time.Millisecond)
	}

	f.rt.Apply([]Spec{{ID: "pod-1", Generation: 2, Action: ActionRecreate, Image: f.image, Volume: vol,
		Args: sh(`test "$(cat /workspace/a)" = kept || exit 3; test ! -e /etc/b || exit 4`)}})
	if w := f.wait(t, "pod-1", 2, agentapi.StateExited); w.Message != "its process exited with status 0." {
		t.Fatalf("generation 2: %+v", w)
	}

	// Fresh on a volume this runtime mounted keeps it (a move gives a new
	// id); fresh on a leftover directory under a new id empties it.
	vol.Fresh = true
	f.rt.Apply([]Spec{{ID: "pod-1", Generation: 3, Action: ActionRun, Image: f.image, Volume: vol,
		Args: sh(`test -e /workspace/a || exit 5`)}})
	f.wait(t, "pod-1", 3, agentapi.StateExited)
	if err := os.MkdirAll(filepath.Join(f.volumes, "vol-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.volumes, "vol-2", "stale"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.rt.Apply([]Spec{{ID: "pod-1", Generation: 4, Action: ActionRun, Image: f.image, Volume: Volume{ID: "vol-2", Fresh: true},
		Args: sh(`test -z "$(ls -A /workspace)" || exit 6`)}})
	f.wait(t, "pod-1", 4, agentapi.StateExited)
}

// TestWorkspaceAcrossStopStart: a file written in the container's
// /workspace survives a stop (torn down, volume kept) and a start of the
// next generation on the same volume; a row moved elsewhere runs on a new,
// fresh volume id, where the file is absent.
func TestWorkspaceAcrossStopStart(t *testing.T) {
	f := newFixture(t)
	vol := Volume{ID: "vol-pod-ss-1", MountPath: WorkspacePath, Fresh: true}
	f.rt.Apply([]Spec{{ID: "pod-ss", Generation: 1, Action: ActionRun, Image: f.image, Volume: vol,
		Args: sh("echo kept > /workspace/f && sleep 600")}})
	f.wait(t, "pod-ss", 1, agentapi.StateRunning)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(f.volumes, vol.ID, "f")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("generation 1 never wrote /workspace/f")
		}
		time.Sleep(10 * time.Millisecond)
	}

	f.rt.Apply([]Spec{{ID: "pod-ss", Generation: 1, Action: ActionStop, Volume: Volume{ID: vol.ID, MountPath: WorkspacePath}}})
	f.wait(t, "pod-ss", 1, StateGone)

	// Started again on its node: the same volume, no longer fresh.
	f.rt.Apply([]Spec{{ID: "pod-ss", Generation: 2, Action: ActionRun, Image: f.image, Volume: Volume{ID: vol.ID, MountPath: WorkspacePath},
		Args: sh(`test "$(cat /workspace/f)" = kept || exit 3`)}})
	if w := f.wait(t, "pod-ss", 2, agentapi.StateExited); w.Message != "its process exited with status 0." {
		t.Fatalf("generation 2 after stop/start: %+v", w)
	}

	// Placed elsewhere: a fresh volume under a new id has no file.
	f.rt.Apply([]Spec{{ID: "pod-ss", Generation: 3, Action: ActionRun, Image: f.image, Volume: Volume{ID: "vol-pod-ss-3", MountPath: WorkspacePath, Fresh: true},
		Args: sh(`test ! -e /workspace/f || exit 4`)}})
	if w := f.wait(t, "pod-ss", 3, agentapi.StateExited); w.Message != "its process exited with status 0." {
		t.Fatalf("generation 3 on a fresh volume: %+v", w)
	}
}

// TestAssignWire: assignments as the server sends them: run, a pod's
// reboot acknowledged as a recreate of the new generation with its stages,
// a stop that deletes the volume, a VM refused by name.
func TestAssignWire(t *testing.T) {
	f := newFixture(t)
	a := agentapi.Assignment{ID: "pod-w", Generation: 1, Kind: agentapi.KindPod, Image: f.image,
		GPUs: []string{"GPU-1"}, GPUIndexes: []int{0}, CPUCores: 2, RAMGb: 1,
		Volume: &agentapi.Volume{ID: "vol-w", SizeGb: 10, MountPath: agentapi.WorkspaceMount, Fresh: true}}
	vm := agentapi.Assignment{ID: "vm-1", Generation: 1, Kind: agentapi.KindVM, Image: "https://images.example/ubuntu.img", Action: agentapi.ActionRun}
	f.rt.Assign([]agentapi.Assignment{a, vm})
	// busybox's sh reads its null stdin and ends: exited.
	f.wait(t, "pod-w", 1, agentapi.StateExited)
	if w := f.wait(t, "vm-1", 1, agentapi.StateFailed); w.Message != "this node's runtime runs pods only (containerd); a VM needs a hypervisor runtime." {
		t.Fatalf("vm: %+v", w)
	}
	a.Generation, a.Action = 2, agentapi.ActionReboot
	f.rt.Assign([]agentapi.Assignment{a})
	f.wait(t, "pod-w", 2, agentapi.StateExited)

	a.Action = agentapi.ActionStop
	a.Volume.Delete = true
	f.rt.Assign([]agentapi.Assignment{a})
	f.wait(t, "pod-w", 2, agentapi.StateGone)
	if _, err := os.Stat(filepath.Join(f.volumes, "vol-w")); !os.IsNotExist(err) {
		t.Fatalf("volume after stop with delete: %v, want gone", err)
	}
}

// TestStages: a starting pod reports its provisioning stages; running is
// ready.
func TestStages(t *testing.T) {
	f := newFixture(t)
	f.rt.Apply([]Spec{{ID: "pod-s", Generation: 1, Action: ActionRun, Image: f.image, Args: sh("sleep 600")}})
	if w := f.wait(t, "pod-s", 1, agentapi.StateRunning); w.ProvisioningStage != agentapi.StageReady {
		t.Fatalf("running: %+v, want stage ready", w)
	}
	f.rt.Apply([]Spec{{ID: "pod-s", Generation: 2, Action: ActionRun, Image: "gpugraph.test/absent:latest"}})
	// No registry is reachable: the pull fails, named.
	w := f.wait(t, "pod-s", 2, agentapi.StateFailed)
	if !strings.HasPrefix(w.Message, "image gpugraph.test/absent:latest: ") || w.ProvisioningStage != "" {
		t.Fatalf("failed pull: %+v", w)
	}
}

// TestMemoryLimitKills: 200 MB under a 64 MiB limit is killed with 137 and
// reported failed.
func TestMemoryLimitKills(t *testing.T) {
	f := newFixture(t)
	f.rt.Apply([]Spec{{ID: "pod-oom", Generation: 1, Action: ActionRun, Image: f.image, MemoryBytes: 64 << 20,
		Args: []string{"dd", "if=/dev/zero", "of=/dev/null", "bs=200M", "count=1"}}})
	w := f.wait(t, "pod-oom", 1, agentapi.StateFailed)
	if want := "its process was killed (status 137), as the kernel does when it passes its memory limit of 64 MiB."; w.Message != want {
		t.Fatalf("message %q, want %q", w.Message, want)
	}
}

// TestStopGone: stop tears the container down and reports gone; an id no
// longer assigned is stopped, reported gone once, then forgotten.
func TestStopGone(t *testing.T) {
	f := newFixture(t)
	run := []Spec{
		{ID: "pod-a", Generation: 1, Action: ActionRun, Image: f.image, Args: sh("sleep 600")},
		{ID: "pod-b", Generation: 4, Action: ActionRun, Image: f.image, Args: sh("sleep 600")},
	}
	f.rt.Apply(run)
	f.wait(t, "pod-a", 1, agentapi.StateRunning)
	f.wait(t, "pod-b", 4, agentapi.StateRunning)

	f.rt.Apply([]Spec{{ID: "pod-a", Generation: 1, Action: ActionStop}, run[1]})
	f.wait(t, "pod-a", 1, StateGone)
	ctx := namespaces.WithNamespace(context.Background(), containerdtest.Namespace)
	if _, err := f.d.Client.LoadContainer(ctx, "pod-a"); !errdefs.IsNotFound(err) {
		t.Fatalf("pod-a's container after stop: %v, want not found", err)
	}

	f.rt.Apply(nil)
	f.wait(t, "pod-b", 4, StateGone)
	if got := f.rt.Report(); len(got) != 0 {
		t.Fatalf("report after gone was reported: %+v, want none", got)
	}
	if _, err := f.d.Client.LoadContainer(ctx, "pod-b"); !errdefs.IsNotFound(err) {
		t.Fatalf("pod-b's container after unassign: %v, want not found", err)
	}
}

// TestAssignedAgainAfterItsLoopEnded: an id unassigned, torn down and
// gone, whose loop has ended but that no Report has forgotten yet, is
// assigned again: it runs again (a loop of its own), never left with a
// spec no loop reads.
func TestAssignedAgainAfterItsLoopEnded(t *testing.T) {
	f := newFixture(t)
	run := func(gen int) []Spec {
		return []Spec{{ID: "pod-a", Generation: gen, Action: ActionRun, Image: f.image, Args: sh("sleep 600")}}
	}
	f.rt.Apply(run(1))
	f.wait(t, "pod-a", 1, agentapi.StateRunning)
	f.rt.Apply(nil)
	w := f.rt.sup.Workload("pod-a")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if w.Ended() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("pod-a's loop never ended after it was unassigned")
		}
	}
	f.rt.Apply(run(2))
	f.wait(t, "pod-a", 2, agentapi.StateRunning)
}

// TestRunWaitsForStoppingGPUs: a preempted workload is told stop with no
// GPUs (the server gave them to its preemptor) beside its preemptor's run
// on them; the preemptor's container is not made until the victim's is
// removed, while a run on other GPUs starts at once. The victim here
// finishes its SIGTERM handler only once the test lets it.
func TestRunWaitsForStoppingGPUs(t *testing.T) {
	f := newFixture(t)
	f.rt.cfg.StopGrace = 5 * time.Minute
	victim := Spec{ID: "spot", Generation: 1, Action: ActionRun, Image: f.image, GPUs: []string{"GPU-x"}, Volume: Volume{ID: "vol-spot"},
		Args: sh("trap 'while [ ! -e /workspace/release ]; do sleep 1; done; exit 0' TERM; while true; do sleep 1; done")}
	f.rt.Apply([]Spec{victim})
	f.wait(t, "spot", 1, agentapi.StateRunning)

	pass := []Spec{{ID: "spot", Generation: 1, Action: ActionStop},
		{ID: "res", Generation: 1, Action: ActionRun, Image: f.image, GPUs: []string{"GPU-x"}, Args: sh("sleep 600")},
		{ID: "other", Generation: 1, Action: ActionRun, Image: f.image, GPUs: []string{"GPU-y"}, Args: sh("sleep 600")}}
	f.rt.Apply(pass)
	f.wait(t, "other", 1, agentapi.StateRunning)
	// The server repeats its list every report; res still waits.
	f.rt.Apply(pass)
	got := map[string]agentapi.WorkloadReport{}
	for _, w := range f.rt.Report() {
		got[w.ID] = w
	}
	if r := got["res"]; r.State != agentapi.StateStarting || r.ProvisioningStage != "" {
		t.Fatalf("res while spot tears down: %+v, want starting with no stage", r)
	}
	if s := got["spot"]; s.State != agentapi.StateRunning {
		t.Fatalf("spot while it tears down: %+v", s)
	}
	ctx := namespaces.WithNamespace(context.Background(), containerdtest.Namespace)
	if _, err := f.d.Client.LoadContainer(ctx, "res"); !errdefs.IsNotFound(err) {
		t.Fatalf("res's container while spot tears down: %v, want not found", err)
	}

	if err := os.WriteFile(filepath.Join(f.volumes, "vol-spot", "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.wait(t, "res", 1, agentapi.StateRunning)
	for _, w := range f.rt.Report() {
		if w.ID == "spot" && w.State != StateGone {
			t.Fatalf("res runs while spot reports %+v", w)
		}
	}
}
