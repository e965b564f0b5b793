package dispatche2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	ctrruntime "gpugraph/internal/agent/containerd"
	"gpugraph/internal/agent/containerd/containerdtest"
	"gpugraph/internal/agent/qemu/qemutest"
)

// TestPodsAndVMsOnOneNode: the agent with --runtime qemu and a
// containerd address runs the pod it is assigned in containerd (its
// marker lands in its volume) and the VM in QEMU (its guest comes up),
// reports both running in one heartbeat, and tears each down in its own
// runtime when told stop.
func TestPodsAndVMsOnOneNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containerd, QEMU and the agent binary")
	}
	qemutest.Binary(t)
	g := qemutest.Build(t)
	bin := filepath.Join(t.TempDir(), "agent")
	build := exec.Command("go", "build", "-tags", "static_build", "-o", bin, "gpugraph/cmd/agent")
	built := make(chan []byte, 1)
	go func() {
		out, err := build.CombinedOutput()
		if err != nil {
			out = append(out, []byte("\n"+err.Error())...)
		} else {
			out = nil
		}
		built <- out
	}()
	d := containerdtest.Start(t)
	ctr := d.InNamespace(t, ctrruntime.DefaultNamespace)
	img := containerdtest.ImportBusybox(t, ctr, "gpugraph.test/mixed:1", "sh", "-c", "echo pod-ran > /workspace/marker; sleep 3600")
	if out := <-built; out != nil {
		t.Fatalf("go build -tags static_build ./cmd/agent: %s", out)
	}

	images := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(images, "tiny"), 0o755))
	must(t, os.Symlink(g.Kernel, filepath.Join(images, "tiny", "vmlinuz")))
	must(t, os.Symlink(g.Initrd, filepath.Join(images, "tiny", "initrd")))
	must(t, os.WriteFile(filepath.Join(images, "tiny", "ready-line"), []byte(qemutest.ReadyLine+"\n"), 0o644))
	state, vols := t.TempDir(), t.TempDir()
	t.Cleanup(func() {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if c, _ := os.ReadFile(p); strings.Contains(string(c), "qemu-system") && strings.Contains(string(c), state+"/") {
				if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	})

	vm := agentapi.Assignment{ID: "vm-1", Generation: 1, Kind: agentapi.KindVM, Image: "tiny", CPUCores: 1, RAMGb: 1, DiskSizeGb: 1,
		Volume: &agentapi.Volume{ID: "vol-vm", SizeGb: 1, Fresh: true}, Action: agentapi.ActionRun}
	pod := agentapi.Assignment{ID: "pod-1", Generation: 1, Kind: agentapi.KindPod, Image: img,
		Volume: &agentapi.Volume{ID: "vol-pod", SizeGb: 1, MountPath: agentapi.WorkspaceMount, Fresh: true}, Action: agentapi.ActionRun}
	var (
		mu     sync.Mutex
		assign = []agentapi.Assignment{vm, pod}
		last   []agentapi.WorkloadReport
		seen   = map[string]bool{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == agentapi.HeartbeatPath {
			var hb agentapi.HeartbeatRequest
			json.Unmarshal(b, &hb)
			last = hb.Workloads
			for _, w := range hb.Workloads {
				seen[w.ID+"/"+w.State] = true
			}
		}
		json.NewEncoder(w).Encode(agentapi.ReportResponse{NodeID: "node-1", Status: "ok", Workloads: assign})
	}))
	defer srv.Close()
	var out strings.Builder
	var outMu sync.Mutex
	cmd := exec.Command(bin, "--server", srv.URL, "--node-name", "mixed-node", "--token", "t", "--interval", "200ms", "--mock", "dgxh100",
		"--runtime", "qemu", "--qemu-state-dir", state, "--vm-images", images, "--qemu-accel", "tcg", "--qemu-stop-grace", "20s",
		"--qemu-forward-addr", "127.0.0.1", "--containerd-address", d.Address, "--volume-root", vols)
	cmd.Stdout, cmd.Stderr = writerFunc(func(p []byte) (int, error) { outMu.Lock(); defer outMu.Unlock(); return out.Write(p) }), nil
	cmd.Stderr = cmd.Stdout
	must(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	await := func(want ...string) {
		t.Helper()
		deadline := time.Now().Add(120 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			ok := true
			for _, w := range want {
				ok = ok && seen[w]
			}
			mu.Unlock()
			if ok {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		outMu.Lock()
		defer outMu.Unlock()
		t.Fatalf("never saw %v; last heartbeat %+v\n%s", want, last, out.String())
	}
	await("vm-1/running", "pod-1/running")
	if b, err := os.ReadFile(filepath.Join(vols, "vol-pod", "marker")); err != nil || string(b) != "pod-ran\n" {
		t.Errorf("the pod's marker: %q, %v; want it in its volume", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(state, "vms", "vm-1", "console.log")); err != nil || !strings.Contains(string(b), qemutest.ReadyLine) {
		t.Errorf("the VM's console (%v) lacks its guest's ready line", err)
	}
	if _, err := os.Stat(filepath.Join(vols, "vol-vm")); !os.IsNotExist(err) {
		t.Errorf("the VM's volume under the pods' volume root: %v; want none there", err)
	}

	mu.Lock()
	vm.Action, pod.Action = agentapi.ActionStop, agentapi.ActionStop
	assign = []agentapi.Assignment{vm, pod}
	mu.Unlock()
	await("vm-1/gone", "pod-1/gone")
	if cs, err := ctr.Containers(context.Background()); err != nil || len(cs) != 0 {
		t.Errorf("%d containers left after the pod's stop (%v), want 0", len(cs), err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
