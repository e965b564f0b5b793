package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/qemu/qemutest"
)

// TestBinaryQEMU: the agent binary with --runtime qemu on a simulated
// server boots the VM it is assigned from its image catalog (under TCG,
// as asked), reports it running once the guest is up, with its endpoint
// (the forwarded SSH port), and gone once a stop powered it off; its
// console holds the guest's boot lines. The pod it is assigned beside
// goes to the simulated runtime (--mock), not to QEMU.
func TestBinaryQEMU(t *testing.T) {
	qemutest.Binary(t)
	g := qemutest.Build(t)
	bin := agentBinary(t)
	images := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(images, "tiny"), 0o755))
	must(os.Symlink(g.Kernel, filepath.Join(images, "tiny", "vmlinuz")))
	must(os.Symlink(g.Initrd, filepath.Join(images, "tiny", "initrd")))
	must(os.WriteFile(filepath.Join(images, "tiny", "ready-line"), []byte(qemutest.ReadyLine+"\n"), 0o644))
	// The agent leaves its VMs running for the next one to adopt:
	// StateDir kills each QEMU under it when the test ends.
	state := qemutest.StateDir(t)

	vm := agentapi.Assignment{ID: "vm-1", Generation: 1, Kind: agentapi.KindVM, Image: "tiny", CPUCores: 1, RAMGb: 1, DiskSizeGb: 1,
		Volume: &agentapi.Volume{ID: "vol-1", SizeGb: 1, Fresh: true}, Action: agentapi.ActionRun}
	pod := agentapi.Assignment{ID: "pod-1", Generation: 1, Kind: agentapi.KindPod, Image: "busybox", Action: agentapi.ActionRun}
	var (
		mu      sync.Mutex
		assign  = []agentapi.Assignment{vm, pod}
		reports []agentapi.WorkloadReport
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == agentapi.HeartbeatPath {
			var hb agentapi.HeartbeatRequest
			json.Unmarshal(b, &hb)
			reports = append(reports, hb.Workloads...)
		}
		json.NewEncoder(w).Encode(agentapi.ReportResponse{NodeID: "node-1", Status: "ok", Workloads: assign})
	}))
	defer srv.Close()
	var out bytes.Buffer
	cmd := exec.Command(bin, "--server", srv.URL, "--node-name", "qemu-node", "--token", "t", "--interval", "200ms", "--mock", "dgxh100",
		"--runtime", "qemu", "--qemu-state-dir", state, "--vm-images", images, "--qemu-accel", "tcg", "--qemu-stop-grace", "20s",
		"--qemu-forward-addr", "127.0.0.1", "--mock-start-delay", "0s")
	cmd.Stdout, cmd.Stderr = &out, &out
	must(cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("exit after SIGTERM: %v, want 0\n%s", err, out.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("agent ignored SIGTERM")
		}
	}()
	await := func(id string, gen int, state string) agentapi.WorkloadReport {
		t.Helper()
		deadline := time.After(90 * time.Second)
		for {
			mu.Lock()
			var seen *agentapi.WorkloadReport
			for _, r := range reports {
				if r.ID == id && r.Generation == gen && r.State == state {
					seen = &r
				}
			}
			last := append([]agentapi.WorkloadReport(nil), reports[max(len(reports)-3, 0):]...)
			mu.Unlock()
			if seen != nil {
				return *seen
			}
			select {
			case err := <-exited:
				t.Fatalf("agent exited: %v\n%s", err, out.String())
			case <-deadline:
				t.Fatalf("%s generation %d never reported %s; last %+v\n%s", id, gen, state, last, out.String())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	if r := await("vm-1", 1, agentapi.StateRunning); !regexp.MustCompile(`^ssh://127\.0\.0\.1:[0-9]+$`).MatchString(r.Endpoint) {
		t.Errorf("vm-1's endpoint %q, want ssh://127.0.0.1:PORT", r.Endpoint)
	}
	await("pod-1", 1, agentapi.StateRunning)
	console, err := os.ReadFile(filepath.Join(state, "vms", "vm-1", "console.log"))
	if err != nil || !strings.Contains(string(console), qemutest.BootsPrefix+"0") || !strings.Contains(string(console), "Linux version") {
		t.Errorf("console (%v) lacks the kernel's and the guest's boot lines:\n%s", err, console)
	}
	mu.Lock()
	vm.Action = agentapi.ActionStop
	assign = []agentapi.Assignment{vm, pod}
	mu.Unlock()
	await("vm-1", 1, agentapi.StateGone)
	if _, err := os.Stat(filepath.Join(state, "disks", "vol-1.qcow2")); err != nil {
		t.Errorf("the stopped VM's disk: %v, want it kept", err)
	}
}
