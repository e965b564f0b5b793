package qemu

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/qemu/qemutest"
)

// TestGuestReached: a VM is reachable and has its SSH keys. Its guest's
// port 22 is forwarded from a free host port, which its endpoint names
// (the guest answers a banner there); its cloud-init seed is a disk
// labelled cidata whose meta-data and user-data the guest prints, keys
// and all; it walks the stages booting, then ready; a stop and start
// keeps its endpoint.
func TestGuestReached(t *testing.T) {
	f := newFixture(t)
	keys := []string{
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@example.org",
		"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 bob: the #2 key",
	}
	s := Spec{ID: "vm-net", Generation: 1, Action: ActionRun, Image: "guest", CPUs: 1, MemoryGb: 1, DiskGb: 1,
		Volume: Volume{ID: "vol-net", Fresh: true}, SSHPublicKeys: keys}
	f.rt.Apply([]Spec{s})

	var stages []string
	var w agentapi.WorkloadReport
	deadline := time.Now().Add(120 * time.Second)
	for w.State != agentapi.StateRunning && time.Now().Before(deadline) {
		for _, r := range f.rt.Report() {
			if r.ID == s.ID {
				w = r
			}
		}
		if w.ProvisioningStage != "" && (len(stages) == 0 || stages[len(stages)-1] != w.ProvisioningStage) {
			stages = append(stages, w.ProvisioningStage)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if w.State != agentapi.StateRunning {
		t.Fatalf("never running: %+v", w)
	}
	// creating_volume lasts as long as qemu-img create, which a poll may miss.
	if want := []string{agentapi.StageCreatingVolume, agentapi.StageBooting, agentapi.StageReady}; !slices.Equal(stages, want) && !slices.Equal(stages, want[1:]) {
		t.Errorf("stages %v, want %v", stages, want)
	}

	var st vmState
	b, _ := os.ReadFile(filepath.Join(f.dir, "vms", s.ID, "state.json"))
	json.Unmarshal(b, &st)
	if st.SSHPort == 0 || w.Endpoint != "ssh://127.0.0.1:"+strconv.Itoa(st.SSHPort) {
		t.Fatalf("endpoint %q, forwarded port %d", w.Endpoint, st.SSHPort)
	}
	if banner := readBanner(t, "127.0.0.1:"+strconv.Itoa(st.SSHPort)); banner != qemutest.Banner {
		t.Errorf("the guest's port 22 answered %q, want %q", banner, qemutest.Banner)
	}

	con, err := f.rt.ConsoleTail(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var seed []string
	for _, l := range strings.Split(strings.ReplaceAll(string(con), "\r", ""), "\n") {
		if strings.HasPrefix(l, qemutest.SeedPrefix) || strings.HasPrefix(l, qemutest.SeedFilePrefix+"meta-data: ") || strings.HasPrefix(l, qemutest.SeedFilePrefix+"user-data: ") {
			seed = append(seed, l)
		}
	}
	want := []string{
		// vvfat presents a disk with one partition, the labelled FAT.
		qemutest.SeedPrefix + "/dev/vdb1",
		`gpugraph-guest: meta-data: instance-id: "vm-net-vol-net"`,
		`gpugraph-guest: meta-data: local-hostname: "vm-net"`,
		`gpugraph-guest: user-data: #cloud-config`,
		`gpugraph-guest: user-data: ssh_authorized_keys:`,
		`gpugraph-guest: user-data:   - "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@example.org"`,
		`gpugraph-guest: user-data:   - "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 bob: the #2 key"`,
	}
	if !slices.Equal(seed, want) {
		t.Errorf("the guest read its seed as\n%s\nwant\n%s", strings.Join(seed, "\n"), strings.Join(want, "\n"))
	}

	// Stopped, it has no endpoint; started again, the same one.
	s.Action = ActionStop
	f.rt.Apply([]Spec{s})
	if g := wait(t, f.rt, s.ID, 1, agentapi.StateGone); g.Endpoint != "" {
		t.Errorf("a stopped VM's endpoint %q, want none", g.Endpoint)
	}
	s.Generation, s.Action = 2, ActionRun
	f.rt.Apply([]Spec{s})
	if g := wait(t, f.rt, s.ID, 2, agentapi.StateRunning); g.Endpoint != w.Endpoint {
		t.Errorf("after stop and start: endpoint %q, want %q again", g.Endpoint, w.Endpoint)
	}
}

// readBanner connects to addr until the guest answers a line (user-mode
// networking accepts, then closes, while nothing listens in the guest).
func readBanner(t *testing.T, addr string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if err == nil {
				return strings.TrimSpace(line)
			}
			last = err
		} else {
			last = err
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no banner from %s: %v", addr, last)
	return ""
}

// TestForwardPorts: a VM gets back the port it had when it is free, and
// never a port given to another VM whose QEMU has not bound it yet.
func TestForwardPorts(t *testing.T) {
	r := &Runtime{cfg: Config{Net: NetUser, ForwardAddr: "127.0.0.1"}, ports: map[string]int{}}
	a, err := r.forwardPort("vm-a", 0)
	if err != nil || a == 0 {
		t.Fatalf("vm-a: port %d, %v", a, err)
	}
	if again, err := r.forwardPort("vm-a", a); again != a || err != nil {
		t.Errorf("vm-a again: port %d, %v; want %d, the one it had", again, err, a)
	}
	// vm-b had a's port once (before a restart of the agent): a holds it.
	b, err := r.forwardPort("vm-b", a)
	if err != nil || b == 0 || b == a {
		t.Errorf("vm-b, which had %d before: port %d, %v; want another", a, b, err)
	}
	// A port something else listens on is not given.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	if c, err := r.forwardPort("vm-c", busy); err != nil || c == busy || c == a || c == b {
		t.Errorf("vm-c, whose port %d is busy: port %d, %v; want a free one of its own", busy, c, err)
	}
	r.cfg.EndpointHost = "node-7.example"
	if e, want := r.endpoint(a), "ssh://node-7.example:"+strconv.Itoa(a); e != want {
		t.Errorf("endpoint %q, want %q", e, want)
	}
}
