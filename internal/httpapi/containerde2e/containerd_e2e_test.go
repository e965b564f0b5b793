package containerde2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/containerd/errdefs"

	"gpugraph/internal/agent/agentapi"
	ctrruntime "gpugraph/internal/agent/containerd"
	"gpugraph/internal/agent/containerd/containerdtest"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// image is the pod's image: busybox whose command is script.
const image = "gpugraph.test/workspace-marker:latest"

// script is what the pod's container runs. Each run appends its
// generation to a file of its own filesystem (/etc/generations) and
// copies what that file then holds into /workspace, writes its
// environment there, and appends its generation to
// /workspace/generations last (the test waits for that line). On SIGTERM
// it marks /workspace/stopping and stays until the host removes
// /workspace/hold, so a test can hold a teardown open as long as it needs.
const script = `trap 'touch /workspace/stopping; while test -e /workspace/hold; do sleep 0.02; done; exit 0' TERM
echo "$GPUGRAPH_GENERATION" >> /etc/generations
cat /etc/generations > /workspace/rootfs-generations
env > /workspace/env
echo "$GPUGRAPH_GENERATION" >> /workspace/generations
sleep 3600 & wait`

// The restart seed's sentences on a node that runs pods in containerd,
// with the real agent binary on both engines: a pod created through the
// API runs with the agent's stages in order; its restart is a recreate
// the agent acknowledges with the new generation, the file it wrote in
// /workspace still there and its own filesystem reset; a stop holds its
// GPU while the container is really torn down (restart answers 409
// POD_STOPPING meanwhile) and the agent's gone report releases it; a
// stop/start on its node keeps /workspace; its node removed, a restart
// places it on the other node on a fresh, empty volume, which the answer
// and the event log say, and the old node's agent deleted the old one.
func TestContainerdPodEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containerd and the agent binary")
	}
	agent := buildAgent(t) // links while containerd starts
	d := containerdtest.Start(t)
	ctr := d.InNamespace(t, ctrruntime.DefaultNamespace)
	containerdtest.ImportBusybox(t, ctr, image, "sh", "-c", script)
	bin := agent()

	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		env := servertest.New(t, st, fixture)
		vols := map[string]string{}
		for _, node := range []string{"n-ca", "n-cb"} {
			vols[node] = t.TempDir()
			startAgent(t, bin, servertest.Enroll(t, st, nodeName(node), "c-ctrd"), "--server", env.Srv.URL, "--node-name", nodeName(node),
				"--interval", "200ms", "--mock", "dgxh100", "--runtime", "containerd", "--containerd-address", d.Address,
				"--volume-root", vols[node])
		}
		// Each agent's inventory gives its node's GPUs their UUIDs.
		waitFor(t, "both agents' inventories", func() bool {
			n := storetest.Count(t, st, "gpus", "uuid <> ''")
			return n == 16
		})

		// Created through the API, placed on a node, running there with
		// the agent's stages in order.
		code, body := env.Do("POST", "/v1/vms", "ctrd-op", []byte(`{"name": "marker", "gpuModelId": "h100", "gpuCount": 1,
			"capabilityTier": "pod", "imageUrl": "`+image+`", "volumeGb": 10}`), nil)
		var created struct{ ID, Status string }
		if err := json.Unmarshal(body, &created); code != http.StatusCreated || err != nil || created.Status != "deploying" {
			t.Fatalf("create: %d %s, want 201 deploying", code, body)
		}
		id := created.ID
		vm := waitVM(t, st, id, func(vm *models.VM) bool { return vm.Status == models.VMRunning })
		own, gen := *vm.NodeID, vm.Generation
		other := map[string]string{"n-ca": "n-cb", "n-cb": "n-ca"}[own]
		evs := events(t, env, id)
		checkStages(t, evs)
		vol := evs[0].VolumeID
		if evs[0].Transition != string(models.CreatePlaced) || vol == "" || !evs[0].FreshVolume {
			t.Fatalf("first event %+v, want create-placed on a fresh volume", evs[0])
		}
		dir := filepath.Join(vols[own], vol)
		waitFile(t, dir, "generations", lines(gen))
		checkFile(t, dir, "rootfs-generations", lines(gen))
		checkEnv(t, st, dir, id)

		// Restart while running: a recreate, acknowledged by the agent
		// with the new generation; /workspace kept, the container's own
		// filesystem reset.
		if code, body := env.Do("POST", "/v1/vms/"+id+"/restart", "ctrd-op", nil, nil); code != http.StatusOK {
			t.Fatalf("restart: %d %s", code, body)
		}
		if vm := readVM(t, st, id); vm.Generation != gen+1 || vm.Action != models.ActionRecreate {
			t.Errorf("after the restart: generation %d, action %q; want %d, recreate", vm.Generation, vm.Action, gen+1)
		}
		waitVM(t, st, id, func(vm *models.VM) bool { return vm.Status == models.VMRunning && vm.Action == models.ActionRun })
		evs = events(t, env, id)
		if last := evs[len(evs)-1]; last.Transition != string(models.AgentRestarted) || last.Generation == nil || *last.Generation != gen+1 ||
			last.Actor != "agent "+nodeName(own) {
			t.Errorf("last event %+v, want agent-restarted by %s with generation %d", last, nodeName(own), gen+1)
		}
		waitFile(t, dir, "generations", lines(gen, gen+1))
		checkFile(t, dir, "rootfs-generations", lines(gen+1))

		// Stop: the container gets SIGTERM and this test holds its
		// teardown open; meanwhile the row reads stopped and tearing
		// down, a restart answers 409 POD_STOPPING and the GPU stays held.
		// The agent's gone report, once the container is removed, frees it.
		os.Remove(filepath.Join(dir, "stopping")) // the recreate's
		if err := os.WriteFile(filepath.Join(dir, "hold"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		code, body = env.Do("POST", "/v1/vms/"+id+"/stop", "ctrd-op", nil, nil)
		if code != http.StatusOK || !strings.Contains(string(body), `"status":"stopped"`) || !strings.Contains(string(body), `"tearingDown":true`) {
			t.Fatalf("stop: %d %s, want stopped with tearingDown true", code, body)
		}
		waitFor(t, "the container to get SIGTERM", func() bool { return exists(t, filepath.Join(dir, "stopping")) })
		if code, body := env.Do("POST", "/v1/vms/"+id+"/restart", "ctrd-op", nil, nil); code != http.StatusConflict ||
			!strings.Contains(string(body), `"code":"POD_STOPPING"`) {
			t.Errorf("restart while its container tears down: %d %s, want 409 POD_STOPPING", code, body)
		}
		if vm := readVM(t, st, id); !vm.TearingDown || vm.Status != models.VMStopped || heldGPUs(t, st, id) != 1 {
			t.Errorf("while it tears down: %s, tearingDown %v, %d GPUs held; want stopped, true, 1", vm.Status, vm.TearingDown, heldGPUs(t, st, id))
		}
		if err := os.Remove(filepath.Join(dir, "hold")); err != nil {
			t.Fatal(err)
		}
		waitVM(t, st, id, func(vm *models.VM) bool { return !vm.TearingDown })
		if n := heldGPUs(t, st, id); n != 0 {
			t.Errorf("after the agent's gone report: %d GPUs held, want 0", n)
		}
		checkTransitions(t, env, id, models.UserStop, models.AgentGone)
		if _, err := ctr.LoadContainer(ctx, id); !errdefs.IsNotFound(err) {
			t.Errorf("container %s after the teardown: %v, want not found", id, err)
		}

		// Start again on its node: the same volume, /workspace kept.
		resp := env.Request("POST", "/v1/vms/"+id+"/restart", "ctrd-op", nil, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Warning") != "" {
			t.Fatalf("start again: %d, Warning %q; want 200 and none", resp.StatusCode, resp.Header.Get("Warning"))
		}
		vm = waitVM(t, st, id, func(vm *models.VM) bool { return vm.Status == models.VMRunning })
		if *vm.NodeID != own || vm.Generation != gen+2 {
			t.Errorf("started again on %s, generation %d; want %s, %d", *vm.NodeID, vm.Generation, own, gen+2)
		}
		if e := lastOf(t, env, id, models.RestartDeploy); e.VolumeID != vol || e.FreshVolume {
			t.Errorf("restart-deploy on volume %q (fresh %v), want %q, not fresh", e.VolumeID, e.FreshVolume, vol)
		}
		waitFile(t, dir, "generations", lines(gen, gen+1, gen+2))
		checkFile(t, dir, "rootfs-generations", lines(gen+2))

		// Its node removed (the operator's leavingAt passes): the old
		// node's agent tears it down and deletes its volume; a restart
		// places it on the other node on a fresh, empty one, and says so.
		// The sweep is handed an instant past leavingAt: nothing waits for it.
		at := time.Now().UTC().Add(5 * time.Second).Truncate(time.Second)
		if code, body := env.Do("PUT", "/v1/admin/nodes/"+own+"/leaving-at", "ctrd-admin",
			[]byte(`{"leavingAt": "`+at.Format(time.RFC3339)+`"}`), nil); code != http.StatusOK {
			t.Fatalf("leaving-at: %d %s", code, body)
		}
		if res, err := sweep.New(st).Sweep(ctx, at.Add(time.Second), time.Minute); err != nil || res.NodesRemoved != 1 {
			t.Fatalf("sweep past leavingAt: %+v, %v; want one node removed", res, err)
		}
		vm = waitVM(t, st, id, func(vm *models.VM) bool { return !vm.TearingDown })
		if vm.Status != models.VMStopped || vm.StatusReason != models.ReasonNodeRemoved || heldGPUs(t, st, id) != 0 {
			t.Errorf("after its node's removal: %s %q, %d GPUs held; want stopped node_removed, 0", vm.Status, vm.StatusReason, heldGPUs(t, st, id))
		}
		if exists(t, dir) {
			t.Errorf("the removed node's volume %s is still there", dir)
		}
		resp = env.Request("POST", "/v1/vms/"+id+"/restart", "ctrd-op", nil, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("restart after the removal: %d, want 200", resp.StatusCode)
		}
		moved := lastOf(t, env, id, models.RestartReplace)
		want := "299 - \"the disk is gone: deployed fresh on node " + other + " with a fresh, empty volume " + moved.VolumeID + "\""
		if w := resp.Header.Get("Warning"); w != want {
			t.Errorf("restart after the removal: Warning %q, want %q", w, want)
		}
		vm = waitVM(t, st, id, func(vm *models.VM) bool { return vm.Status == models.VMRunning })
		if *vm.NodeID != other || !moved.FreshVolume || moved.VolumeID == vol {
			t.Errorf("moved to %s on volume %q (fresh %v); want %s on a fresh one, not %q", *vm.NodeID, moved.VolumeID, moved.FreshVolume, other, vol)
		}
		fresh := filepath.Join(vols[other], moved.VolumeID)
		waitFile(t, fresh, "generations", lines(vm.Generation))
		checkFile(t, fresh, "rootfs-generations", lines(vm.Generation))
		if v := storetest.Violations(t, st); v != nil {
			t.Errorf("violations: %v", v)
		}
	})
}

// fixture: two empty DGX H100 nodes (their GPUs get their UUIDs from
// their agents' inventories), an operator's key and the platform's.
var fixture = func() string {
	var nodes []string
	for _, n := range []string{"a", "b"} {
		var gpus []string
		for i := range 8 {
			gpus = append(gpus, fmt.Sprintf(`{"id": "c%s-g%d", "index": %d, "modelId": "h100"}`, n, i, i))
		}
		nodes = append(nodes, `{"id": "n-c`+n+`", "name": "ctrd-`+n+`", "clusterId": "c-ctrd", "status": "online", "agentVersion": "2.6.1",
			"cpuCores": 224, "ramGb": 2048, "diskGb": 27939, "gpus": [`+strings.Join(gpus, ",")+`]}`)
	}
	return `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-ctrd", "name": "CTRD", "tenantId": 81}, {"id": "o-platform", "name": "Platform", "tenantId": 9081}],
 "apiKeys": [{"token": "ctrd-op", "organizationId": "o-ctrd", "permissions": ["compute.read", "compute.operate"]},
             {"token": "ctrd-admin", "organizationId": "o-platform", "permissions": ["nodes.admin"]}],
 "nodes": [` + strings.Join(nodes, ",") + `]
}`
}()

// nodeName is the name node id's agent reports under (n-ca: ctrd-a).
func nodeName(id string) string { return strings.Replace(id, "n-c", "ctrd-", 1) }

// lines is the generations written one a line.
func lines(gens ...int) string {
	var b strings.Builder
	for _, g := range gens {
		fmt.Fprintf(&b, "%d\n", g)
	}
	return b.String()
}

// event is one event of GET /v1/vms/{id}/events.
type event struct {
	Transition        string
	Generation        *int
	Actor             string
	ProvisioningStage string
	VolumeID          string
	FreshVolume       bool
}

func events(t *testing.T, env *servertest.Env, id string) []event {
	t.Helper()
	code, body := env.Do("GET", "/v1/vms/"+id+"/events?limit=500", "ctrd-op", nil, nil)
	var page struct{ Events []event }
	if err := json.Unmarshal(body, &page); code != http.StatusOK || err != nil || len(page.Events) == 0 {
		t.Fatalf("events of %s: %d %s", id, code, body)
	}
	return page.Events
}

// lastOf is id's last event of transition tr.
func lastOf(t *testing.T, env *servertest.Env, id string, tr models.TransitionName) event {
	t.Helper()
	evs := events(t, env, id)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Transition == string(tr) {
			return evs[i]
		}
	}
	t.Fatalf("%s has no %s event: %+v", id, tr, evs)
	return event{}
}

// checkTransitions checks that id's events, stages left out, end with want.
func checkTransitions(t *testing.T, env *servertest.Env, id string, want ...models.TransitionName) {
	t.Helper()
	var got []string
	for _, e := range events(t, env, id) {
		if e.Transition != string(models.AgentStage) {
			got = append(got, e.Transition)
		}
	}
	w := make([]string, len(want))
	for i, tr := range want {
		w[i] = string(tr)
	}
	if len(got) < len(w) || !slices.Equal(got[len(got)-len(w):], w) {
		t.Errorf("%s: transitions %v, want them to end with %v", id, got, w)
	}
}

// checkStages checks a first run's events: placed (scheduled), then the
// stages the agent reported, each later in the closed list than the one
// before (a heartbeat reports where the runtime is, and pulling a local
// image takes less than one), then running (ready).
func checkStages(t *testing.T, evs []event) {
	t.Helper()
	var got []string
	for _, e := range evs {
		got = append(got, e.Transition+":"+e.ProvisioningStage)
	}
	ok := len(evs) >= 2 && got[0] == string(models.CreatePlaced)+":"+agentapi.StageScheduled &&
		got[len(got)-1] == string(models.AgentRunning)+":"+agentapi.StageReady
	prev := slices.Index(agentapi.ProvisioningStages, agentapi.StageScheduled)
	for _, e := range evs[1 : len(evs)-1] {
		i := slices.Index(agentapi.ProvisioningStages, e.ProvisioningStage)
		ok = ok && e.Transition == string(models.AgentStage) && e.Actor != "" && i > prev && e.ProvisioningStage != agentapi.StageReady
		prev = i
	}
	if !ok {
		t.Errorf("a first run's events %v, want create-placed:scheduled, agent stages in order, agent-running:ready", got)
	}
}

// checkEnv checks the pod's environment: its GPU as NVIDIA's toolkit
// reads it (the UUID the agent's inventory gave the GPU it holds).
func checkEnv(t *testing.T, st *store.Store, dir, id string) {
	t.Helper()
	var uuids []string
	storetest.Scan(t, st, &uuids, "SELECT uuid FROM gpus WHERE holder_vm_id = ?", id)
	b, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(string(b), "\n")
	for _, want := range []string{"NVIDIA_VISIBLE_DEVICES=" + strings.Join(uuids, ","), "GPUGRAPH_WORKLOAD_ID=" + id} {
		if len(uuids) != 1 || !slices.Contains(vars, want) {
			t.Errorf("the pod's environment lacks %s (it holds %v):\n%s", want, uuids, b)
		}
	}
}

func readVM(t *testing.T, st *store.Store, id string) *models.VM {
	t.Helper()
	var vm models.VM
	storetest.Take(t, st, &vm, "vms", "id = ?", id)
	return &vm
}

func heldGPUs(t *testing.T, st *store.Store, id string) int64 {
	t.Helper()
	n := storetest.Count(t, st, "gpus", "holder_vm_id = ?", id)
	return n
}

// waitVM polls row id until ok holds.
func waitVM(t *testing.T, st *store.Store, id string, ok func(*models.VM) bool) *models.VM {
	t.Helper()
	var vm *models.VM
	waitFor(t, "vm "+id, func() bool { vm = readVM(t, st, id); return ok(vm) })
	return vm
}

// waitFor polls ok every 20 ms for at most 30 s (a loaded machine under
// the race detector), then fails naming what it waited for.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s\nagents:\n%s", what, agentLog.tail())
		}
	}
}

// waitFile waits until dir/name holds want.
func waitFile(t *testing.T, dir, name, want string) {
	t.Helper()
	var got []byte
	waitFor(t, fmt.Sprintf("%s to hold %q", filepath.Join(dir, name), want), func() bool {
		got, _ = os.ReadFile(filepath.Join(dir, name))
		return string(got) == want
	})
}

func checkFile(t *testing.T, dir, name, want string) {
	t.Helper()
	if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
		t.Errorf("%s holds %q (%v), want %q", filepath.Join(dir, name), got, err, want)
	}
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// buildAgent starts building the agent binary with containerd in it (the
// static_build tag, as make build does) and answers a func that waits for
// it and answers its path. The build ends with t.
func buildAgent(t *testing.T) func() string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agent")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-tags", "static_build", "-o", bin, "gpugraph/cmd/agent")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { <-done })
	return func() string {
		t.Helper()
		if err := <-done; err != nil {
			t.Fatalf("go build -tags static_build ./cmd/agent: %v\n%s", err, out.String())
		}
		done <- nil // for the cleanup
		return bin
	}
}

// agentLog collects every agent's output, for a failure's message.
var agentLog logBuffer

type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// tail is the last 6,000 bytes written.
func (l *logBuffer) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	return s[max(0, len(s)-6000):]
}

// startAgent runs the agent binary with args and the one-time bootstrap
// token in its environment (off the process list), and kills it when t
// ends; the containers it started stay for the next agent, as they would
// on a node, until the namespace's cleanup removes them.
func startAgent(t *testing.T, bin, bootstrapToken string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GPUGRAPH_BOOTSTRAP_TOKEN="+bootstrapToken)
	cmd.Stdout, cmd.Stderr = &agentLog, &agentLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}
