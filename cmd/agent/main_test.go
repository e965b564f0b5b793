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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/sim"
)

func TestParseFlags(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	base := []string{"--server", "http://s:8080", "--node-name", "n1"}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(options) bool
		wantErr string
	}{
		{name: "token from flag", args: append(base, "--token", "t1"),
			check: func(o options) bool { return o.token == "t1" && o.interval == 10*time.Second }},
		{name: "token from env", args: base, env: map[string]string{"GPUGRAPH_TOKEN": "t2"},
			check: func(o options) bool { return o.token == "t2" }},
		{name: "flag beats env", args: append(base, "--token", "t1"), env: map[string]string{"GPUGRAPH_TOKEN": "t2"},
			check: func(o options) bool { return o.token == "t1" }},
		{name: "everything", args: append(base, "--token", "t", "--cluster-id", "c9", "--interval", "2s", "--mock", "dgxa100",
			"--mock-xid", "3:79", "--mock-xid", "1:94", "--ignore-xids", "1,2"),
			check: func(o options) bool {
				return o.clusterID == "c9" && o.interval == 2*time.Second && o.mock == "dgxa100" &&
					len(o.mockXIDs) == 2 && o.mockXIDs[0] == (sim.XID{Index: 3, XID: 79}) &&
					len(o.ignoreXIDs) == 2 && !o.ignoreAllXIDs
			}},
		{name: "ignore all", args: append(base, "--token", "t", "--ignore-xids", "all"),
			check: func(o options) bool { return o.ignoreAllXIDs }},
		{name: "no token", args: base, wantErr: "GPUGRAPH_TOKEN"},
		{name: "bootstrap token from env", args: append(base, "--credential-file", "/tmp/c"), env: map[string]string{"GPUGRAPH_BOOTSTRAP_TOKEN": "b1"},
			check: func(o options) bool { return o.bootstrapToken == "b1" && o.credentialFile == "/tmp/c" && o.token == "" }},
		{name: "no server", args: []string{"--token", "t", "--node-name", "n"}, wantErr: "--server"},
		{name: "bad server", args: []string{"--server", "s:8080", "--token", "t", "--node-name", "n"}, wantErr: "http://"},
		{name: "no node name", args: []string{"--server", "http://s", "--token", "t"}, wantErr: "--node-name"},
		{name: "zero interval", args: append(base, "--token", "t", "--interval", "0s"), wantErr: "--interval"},
		{name: "mock-xid without mock", args: append(base, "--token", "t", "--mock-xid", "3:79"), wantErr: "needs --mock"},
		{name: "bad mock-xid", args: append(base, "--token", "t", "--mock", "dgxh100", "--mock-xid", "3"), wantErr: "INDEX:XID"},
		{name: "bad ignore list", args: append(base, "--token", "t", "--ignore-xids", "1,two"), wantErr: "two"},
		{name: "stray argument", args: append(base, "--token", "t", "extra"), wantErr: "unexpected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, env(tt.env), io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(o) {
				t.Fatalf("parseFlags = %+v, %v", o, err)
			}
		})
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"--server", "http://s", "--token", "t", "--node-name", "n", "--mock", "dgx1"}, os.Getenv, &stderr); code != 2 {
		t.Errorf("unknown mock: exit %d, want 2", code)
	}
	if code := run([]string{"--server", "http://s", "--token", "t", "--node-name", "n", "--mock", "dgxh100", "--mock-xid", "8:79"}, os.Getenv, &stderr); code != 2 {
		t.Errorf("mock-xid on GPU 8 of 8: exit %d, want 2", code)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// agentBinary builds cmd/agent once per test run.
func agentBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpugraph-agent-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "agent")
		out, err := exec.Command("go", "build", "-o", binPath, "gpugraph/cmd/agent").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, binPath)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" && buildErr == nil {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// Without --mock, on a host with no NVIDIA driver, the agent must say so
// and exit non-zero.
func TestBinaryWithoutDriver(t *testing.T) {
	if nvml.New().Init() == nvml.SUCCESS {
		t.Skip("this host has a working NVIDIA driver")
	}
	bin := agentBinary(t)
	cmd := exec.Command(bin, "--server", "http://127.0.0.1:1", "--node-name", "n1")
	cmd.Env = append(os.Environ(), "GPUGRAPH_TOKEN=t")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() == 0 {
		t.Fatalf("exit: %v, want non-zero\n%s", err, out)
	}
	want := "gpugraph-agent: NVML could not be loaded (no NVIDIA driver on this host?): ERROR_LIBRARY_NOT_FOUND; use --mock dgxh100 to run on a simulated server"
	if !strings.Contains(string(out), want) {
		t.Fatalf("output lacks %q:\n%s", want, out)
	}
}

// The whole binary on a simulated server: token from the environment,
// inventory, heartbeats, --mock-xid failing GPU 3 after the first
// heartbeat, and exit 0 on SIGTERM.
func TestBinaryMockEndToEnd(t *testing.T) {
	bin := agentBinary(t)
	type req struct {
		path, auth string
		body       []byte
	}
	var (
		mu   sync.Mutex
		reqs []req
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, req{r.URL.Path, r.Header.Get("Authorization"), b})
		mu.Unlock()
		if r.URL.Path == agentapi.InventoryPath {
			io.WriteString(w, `{"nodeId":"node-1"}`)
			return
		}
		io.WriteString(w, `{"status":"ok"}`)
	}))
	defer srv.Close()
	heartbeats := func() []agentapi.HeartbeatRequest {
		mu.Lock()
		defer mu.Unlock()
		var out []agentapi.HeartbeatRequest
		for _, r := range reqs {
			if r.path == agentapi.HeartbeatPath {
				var hb agentapi.HeartbeatRequest
				if err := json.Unmarshal(r.body, &hb); err != nil {
					t.Errorf("heartbeat %s: %v", r.body, err)
				}
				out = append(out, hb)
			}
		}
		return out
	}

	var out bytes.Buffer
	cmd := exec.Command(bin, "--server", srv.URL, "--node-name", "mock-node", "--cluster-id", "c1",
		"--interval", "100ms", "--mock", "dgxh100", "--mock-xid", "3:79")
	cmd.Env = append(os.Environ(), "GPUGRAPH_TOKEN=env-token")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(15 * time.Second)
	for len(heartbeats()) < 3 {
		select {
		case err := <-exited:
			t.Fatalf("agent exited early: %v\n%s", err, out.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("no 3 heartbeats in time\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v, want 0\n%s", err, out.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("agent ignored SIGTERM")
	}

	mu.Lock()
	first := reqs[0]
	mu.Unlock()
	if first.path != agentapi.InventoryPath || first.auth != "Bearer env-token" {
		t.Fatalf("first request %s with %q", first.path, first.auth)
	}
	var inv agentapi.InventoryRequest
	if err := json.Unmarshal(first.body, &inv); err != nil {
		t.Fatal(err)
	}
	if inv.NodeName != "mock-node" || inv.ClusterID != "c1" || len(inv.GPUs) != 8 || inv.GPUs[3].Health != "healthy" {
		t.Errorf("inventory: %s", first.body)
	}
	hbs := heartbeats()
	if g := hbs[0].GPUs[3]; g.Health != "healthy" {
		t.Errorf("first heartbeat GPU 3: %+v", g)
	}
	for i, hb := range hbs[1:] {
		if g := hb.GPUs[3]; g.Health != "failed" || g.FailedReason != "XID 79" {
			t.Errorf("heartbeat %d GPU 3: %+v", i+2, g)
		}
		if g := hb.GPUs[2]; g.Health != "healthy" {
			t.Errorf("heartbeat %d GPU 2: %+v", i+2, g)
		}
	}
	if strings.Contains(out.String(), "env-token") {
		t.Error("the token appears in the logs")
	}
}

// TestRuntimeFlags: --runtime takes sim or containerd, each with what it
// needs, and names what was wrong.
func TestRuntimeFlags(t *testing.T) {
	base := []string{"--server", "http://s", "--token", "t", "--node-name", "n"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--runtime", "docker"}, `--runtime "docker": want sim, containerd or qemu`},
		{[]string{"--runtime", "qemu", "--qemu-state-dir", ""}, "--runtime qemu needs --qemu-state-dir"},
		{[]string{"--runtime", "qemu", "--qemu-accel", "hvf"}, `--qemu-accel "hvf": want auto, kvm or tcg`},
		{[]string{"--runtime", "qemu", "--qemu-accel", "tcg", "--qemu-require-kvm"}, "--qemu-require-kvm refuses --qemu-accel tcg"},
		{[]string{"--runtime", "qemu", "--qemu-stop-grace", "0s"}, "--qemu-stop-grace 0s: must be positive"},
		{[]string{"--runtime", "qemu", "--qemu-net", "slirp"}, `--qemu-net "slirp": want user or bridge`},
		{[]string{"--runtime", "qemu", "--qemu-net", "bridge"}, "--qemu-net bridge needs --qemu-bridge"},
		{[]string{"--runtime", "sim"}, "--runtime sim needs --mock"},
		{[]string{"--runtime", "containerd", "--volume-root", ""}, "--runtime containerd needs --volume-root"},
	} {
		_, err := parseFlags(append(base, c.args...), func(string) string { return "" }, io.Discard)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	o, err := parseFlags(append(base, "--runtime", "containerd"), func(string) string { return "" }, io.Discard)
	if err != nil || o.containerdAddress != "/run/containerd/containerd.sock" || o.volumeRoot != "/var/lib/gpugraph/volumes" {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	o, err = parseFlags(append(base, "--runtime", "qemu"), func(string) string { return "" }, io.Discard)
	if err != nil || o.qemuStateDir != "/var/lib/gpugraph/qemu" || o.qemuBinary != "qemu-system-x86_64" || o.qemuAccel != "auto" ||
		o.qemuRequireKVM || o.qemuStopGrace != 60*time.Second || o.vmImages != "" || o.qemuNet != "user" || o.qemuForwardAddr != "0.0.0.0" ||
		o.qemuEndpointHost != "" || o.qemuBridge != "" || o.podsInContainerd {
		t.Fatalf("qemu defaults: %+v, %v", o, err)
	}
	// Pods go to containerd beside QEMU only when its address is given.
	o, err = parseFlags(append(base, "--runtime", "qemu", "--containerd-address", "/run/c.sock", "--qemu-net", "bridge", "--qemu-bridge", "br0"),
		func(string) string { return "" }, io.Discard)
	if err != nil || !o.podsInContainerd || o.containerdAddress != "/run/c.sock" || o.qemuNet != "bridge" || o.qemuBridge != "br0" {
		t.Fatalf("qemu with containerd: %+v, %v", o, err)
	}
	o, err = parseFlags(append(base, "--runtime", "containerd", "--containerd-address", "/run/c.sock"), func(string) string { return "" }, io.Discard)
	if err != nil || o.podsInContainerd {
		t.Fatalf("containerd alone: %+v, %v", o, err)
	}
	o, err = parseFlags(append(base, "--runtime", "qemu", "--qemu-state-dir", "/q", "--vm-images", "/img", "--qemu-binary", "/opt/qemu",
		"--qemu-accel", "kvm", "--qemu-require-kvm", "--qemu-stop-grace", "5s"), func(string) string { return "" }, io.Discard)
	if err != nil || o.qemuStateDir != "/q" || o.vmImages != "/img" || o.qemuBinary != "/opt/qemu" || o.qemuAccel != "kvm" ||
		!o.qemuRequireKVM || o.qemuStopGrace != 5*time.Second {
		t.Fatalf("qemu flags: %+v, %v", o, err)
	}
}

// TestQEMURuntimeStartErrors: --runtime qemu without QEMU, with a
// missing image catalog, or refusing TCG where TCG is asked for, exits 1
// naming why, before it reports anything.
func TestQEMURuntimeStartErrors(t *testing.T) {
	base := []string{"--server", "http://127.0.0.1:1", "--token", "t", "--node-name", "n", "--mock", "dgxh100", "--runtime", "qemu",
		"--qemu-state-dir", t.TempDir()}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--qemu-binary", "/nonexistent/qemu"}, `gpugraph-agent: qemu runtime: exec: "/nonexistent/qemu": stat /nonexistent/qemu: no such file or directory`},
		{[]string{"--vm-images", "/nonexistent/images"}, "gpugraph-agent: --vm-images: VM images: open /nonexistent/images: no such file or directory"},
		{[]string{"--qemu-forward-addr", "nowhere"}, `gpugraph-agent: qemu runtime: forward address "nowhere" is not an IP address`},
	} {
		var stderr bytes.Buffer
		if code := run(append(base, c.args...), func(string) string { return "" }, &stderr); code != 1 {
			t.Errorf("%v: exit %d, want 1", c.args, code)
		}
		if !strings.Contains(stderr.String(), c.want+"\n") {
			t.Errorf("%v: stderr\n%s\nwant the line %q", c.args, stderr.String(), c.want)
		}
	}
}
