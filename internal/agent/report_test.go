package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/sim"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// runAgent runs the agent on m against server until the test ends or the
// agent returns; the returned channel yields Run's result.
func runAgent(t *testing.T, m *sim.Server, server string, tweak ...func(*Config)) (<-chan error, context.CancelFunc) {
	t.Helper()
	cfg := Config{
		Server:    server,
		Token:     "tok-123",
		NodeName:  "gpu-node-1",
		ClusterID: "cluster-a",
		NVML:      m,
		Host:      HostInfo(m.HostInfo()),
		Interval:  20 * time.Millisecond,
		Backoff:   Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond},
		EventWait: 10 * time.Millisecond,
		Log:       testLogger(t),
	}
	for _, f := range tweak {
		f(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() { done <- Run(ctx, cfg) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return done, cancel
}

func TestInventoryThenHeartbeats(t *testing.T) {
	srv := newFakeServer(t, nil)
	m := newMock(t, "dgxh100")
	if err := m.SetUsage(5, 87, 42<<30); err != nil {
		t.Fatal(err)
	}
	done, cancel := runAgent(t, m, srv.URL+"/") // a trailing slash must not double up
	waitUntil(t, "3 heartbeats", func() bool { return len(srv.accepted(agentapi.HeartbeatPath)) >= 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v, want nil", err)
	}

	reqs := srv.requests()
	if reqs[0].Path != agentapi.InventoryPath {
		t.Fatalf("first request to %s, want the inventory", reqs[0].Path)
	}
	for _, r := range reqs {
		if r.Auth != "Bearer tok-123" || r.CT != "application/json" || r.Status != http.StatusOK {
			t.Errorf("%s: auth %q, content type %q, status %d", r.Path, r.Auth, r.CT, r.Status)
		}
	}
	if n := len(srv.accepted(agentapi.InventoryPath)); n != 1 {
		t.Errorf("%d inventories, want 1", n)
	}

	inv := decode[agentapi.InventoryRequest](t, reqs[0])
	if inv.NodeName != "gpu-node-1" || inv.ClusterID != "cluster-a" || inv.AgentVersion != Version {
		t.Errorf("inventory header: %+v", inv)
	}
	if inv.CPUCores != 224 || inv.RAMGb != 2048 || inv.DiskGb != 27939 {
		t.Errorf("inventory host figures: %d cores, %d GB RAM, %d GB disk", inv.CPUCores, inv.RAMGb, inv.DiskGb)
	}
	if len(inv.GPUs) != 8 {
		t.Fatalf("inventory has %d GPUs", len(inv.GPUs))
	}
	g := inv.GPUs[3]
	if g.Index != 3 || g.Address != "0000:61:00.0" || g.Name != "NVIDIA H100 80GB HBM3" ||
		g.MemoryBytes != 81920<<20 || g.Health != HealthHealthy || g.FailedReason != "" || !strings.HasPrefix(g.UUID, "GPU-") {
		t.Errorf("inventory GPU 3: %+v", g)
	}

	hb := decode[agentapi.HeartbeatRequest](t, srv.accepted(agentapi.HeartbeatPath)[0])
	if hb.NodeName != "gpu-node-1" || hb.AgentVersion != Version || len(hb.GPUs) != 8 {
		t.Fatalf("heartbeat: %+v", hb)
	}
	for i, g := range hb.GPUs {
		if g.UUID != inv.GPUs[i].UUID || g.Health != HealthHealthy {
			t.Errorf("heartbeat GPU %d: %+v", i, g)
		}
	}
	if g := hb.GPUs[5]; g.Utilization != 87 || g.MemoryUsedBytes != 42<<30 {
		t.Errorf("heartbeat GPU 5 usage: %+v", g)
	}
}

// The exact wire format, field for field, for the server side to match.
func TestWireFormat(t *testing.T) {
	inv, err := json.Marshal(agentapi.InventoryRequest{
		NodeName: "n", ClusterID: "", AgentVersion: "2.6.1", CPUCores: 224, RAMGb: 2048, DiskGb: 27939,
		GPUs: []agentapi.InventoryGPU{
			{Index: 0, UUID: "GPU-a", Address: "0000:3B:00.0", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 85899345920, Health: "healthy"},
			{Index: 1, UUID: "GPU-b", Address: "0000:3C:00.0", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 85899345920, Health: "failed", FailedReason: "XID 79"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantInv := `{"nodeName":"n","clusterId":"","agentVersion":"2.6.1","cpuCores":224,"ramGb":2048,"diskGb":27939,"gpus":[` +
		`{"index":0,"uuid":"GPU-a","address":"0000:3B:00.0","name":"NVIDIA H100 80GB HBM3","memoryBytes":85899345920,"health":"healthy"},` +
		`{"index":1,"uuid":"GPU-b","address":"0000:3C:00.0","name":"NVIDIA H100 80GB HBM3","memoryBytes":85899345920,"health":"failed","failedReason":"XID 79"}]}`
	if string(inv) != wantInv {
		t.Errorf("inventory JSON\n got %s\nwant %s", inv, wantInv)
	}
	hb, err := json.Marshal(agentapi.HeartbeatRequest{NodeName: "n", AgentVersion: "2.6.1", GPUs: []agentapi.HeartbeatGPU{
		{UUID: "GPU-a", Health: "healthy", Utilization: 87, MemoryUsedBytes: 1024},
		{UUID: "GPU-b", Health: "failed", FailedReason: "XID 79"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantHB := `{"nodeName":"n","agentVersion":"2.6.1","gpus":[` +
		`{"uuid":"GPU-a","health":"healthy","utilization":87,"memoryUsedBytes":1024},` +
		`{"uuid":"GPU-b","health":"failed","failedReason":"XID 79","utilization":0,"memoryUsedBytes":0}]}`
	if string(hb) != wantHB {
		t.Errorf("heartbeat JSON\n got %s\nwant %s", hb, wantHB)
	}
}

// --mock-xid: healthy in the inventory and the first heartbeat, failed in
// every heartbeat after it.
func TestMockXIDAfterFirstHeartbeat(t *testing.T) {
	srv := newFakeServer(t, nil)
	m := newMock(t, "dgxh100")
	x, err := sim.ParseXID("3:79")
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, m, srv.URL, func(c *Config) { c.AfterHeartbeat = m.RaiseAfterFirstHeartbeat([]sim.XID{x}, c.Log) })
	waitUntil(t, "4 heartbeats", func() bool { return len(srv.accepted(agentapi.HeartbeatPath)) >= 4 })

	inv := decode[agentapi.InventoryRequest](t, srv.accepted(agentapi.InventoryPath)[0])
	if g := inv.GPUs[3]; g.Health != HealthHealthy {
		t.Errorf("inventory GPU 3: %+v", g)
	}
	for i, r := range srv.accepted(agentapi.HeartbeatPath) {
		g := decode[agentapi.HeartbeatRequest](t, r).GPUs[3]
		want := agentapi.HeartbeatGPU{UUID: inv.GPUs[3].UUID, Health: HealthFailed, FailedReason: "XID 79"}
		if i == 0 {
			want.Health, want.FailedReason = HealthHealthy, ""
		}
		if g != want {
			t.Errorf("heartbeat %d GPU 3: %+v, want %+v", i+1, g, want)
		}
	}
}

// A failure that happens while the server answers 503 is in the first
// heartbeat that gets through; the inventory is retried the same way.
func TestRetryAfter503KeepsFailure(t *testing.T) {
	var (
		mu      sync.Mutex
		outage  bool
		refused int
	)
	srv := newFakeServer(t, func(path string, n int) int {
		mu.Lock()
		defer mu.Unlock()
		if path == agentapi.InventoryPath && n <= 2 {
			return http.StatusServiceUnavailable
		}
		if outage {
			refused++
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	m := newMock(t, "dgxa100")
	runAgent(t, m, srv.URL)
	waitUntil(t, "a heartbeat", func() bool { return len(srv.accepted(agentapi.HeartbeatPath)) >= 1 })

	mu.Lock()
	outage = true
	mu.Unlock()
	waitUntil(t, "503 retries", func() bool { mu.Lock(); defer mu.Unlock(); return refused >= 3 })
	if err := m.RaiseXID(6, 79); err != nil {
		t.Fatal(err)
	}
	before := len(srv.accepted(agentapi.HeartbeatPath))
	mu.Lock()
	outage = false
	mu.Unlock()
	waitUntil(t, "a heartbeat after the outage", func() bool { return len(srv.accepted(agentapi.HeartbeatPath)) > before })

	if n := len(srv.accepted(agentapi.InventoryPath)); n != 1 {
		t.Errorf("%d inventories accepted, want 1", n)
	}
	var invAttempts int
	for _, r := range srv.requests() {
		if r.Path == agentapi.InventoryPath {
			invAttempts++
		}
	}
	if invAttempts != 3 {
		t.Errorf("%d inventory attempts, want 3 (two 503s)", invAttempts)
	}
	first := decode[agentapi.HeartbeatRequest](t, srv.accepted(agentapi.HeartbeatPath)[before])
	if g := first.GPUs[6]; g.Health != HealthFailed || g.FailedReason != "XID 79" {
		t.Errorf("first heartbeat after the outage, GPU 6: %+v", g)
	}
}

// With the server down (connection refused) the agent keeps retrying the
// inventory, and once it is back reports a failure that happened meanwhile.
func TestRetryWhileConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	m := newMock(t, "dgxh200")
	var attempts sync.WaitGroup
	attempts.Add(1)
	var once sync.Once
	probe := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			once.Do(attempts.Done)
		}
		return resp, err
	})}
	runAgent(t, m, "http://"+addr, func(c *Config) { c.HTTPClient = probe })
	attempts.Wait() // at least one refused connection
	// Events are watched before the server is reached.
	if err := m.RaiseXID(2, 94); err != nil {
		t.Fatal(err)
	}

	srv := newFakeServerOn(t, addr, nil)
	waitUntil(t, "a heartbeat", func() bool { return len(srv.accepted(agentapi.HeartbeatPath)) >= 1 })
	inv := decode[agentapi.InventoryRequest](t, srv.accepted(agentapi.InventoryPath)[0])
	if g := inv.GPUs[2]; g.Health != HealthFailed || g.FailedReason != "XID 94" {
		t.Errorf("inventory GPU 2: %+v", g)
	}
	hb := decode[agentapi.HeartbeatRequest](t, srv.accepted(agentapi.HeartbeatPath)[0])
	if g := hb.GPUs[2]; g.Health != HealthFailed || g.FailedReason != "XID 94" {
		t.Errorf("heartbeat GPU 2: %+v", g)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestUnauthorizedIsFatal(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		path   string
	}{
		{"401 on inventory", http.StatusUnauthorized, agentapi.InventoryPath},
		{"403 on inventory", http.StatusForbidden, agentapi.InventoryPath},
		{"401 on heartbeat", http.StatusUnauthorized, agentapi.HeartbeatPath},
		{"403 on heartbeat", http.StatusForbidden, agentapi.HeartbeatPath},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(path string, n int) int {
				if path == tt.path {
					return tt.status
				}
				return http.StatusOK
			})
			done, _ := runAgent(t, newMock(t, "dgxh100"), srv.URL)
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("agent kept running after an auth failure")
			}
			var ae *AuthError
			if !errors.As(err, &ae) || ae.Status != tt.status || ae.Path != tt.path {
				t.Fatalf("Run: %v, want an AuthError %d on %s", err, tt.status, tt.path)
			}
			if !strings.Contains(err.Error(), "nodes.report") {
				t.Errorf("message does not say what the token needs: %v", err)
			}
			attempts := 0
			for _, r := range srv.requests() {
				if r.Path == tt.path {
					attempts++
				}
			}
			if attempts != 1 {
				t.Errorf("%d attempts on %s, want 1: no retry on an auth failure", attempts, tt.path)
			}
			if tt.path == agentapi.InventoryPath && len(srv.accepted(agentapi.HeartbeatPath)) != 0 {
				t.Error("heartbeat sent without an accepted inventory")
			}
		})
	}
}

// A 404 on a heartbeat means the server lost the node: register again.
func TestHeartbeat404ResendsInventory(t *testing.T) {
	srv := newFakeServer(t, func(path string, n int) int {
		if path == agentapi.HeartbeatPath && n == 2 {
			return http.StatusNotFound
		}
		return http.StatusOK
	})
	runAgent(t, newMock(t, "dgxa100"), srv.URL)
	waitUntil(t, "a second inventory and a heartbeat after it", func() bool {
		reqs := srv.requests()
		seen := 0
		for _, r := range reqs {
			switch {
			case r.Path == agentapi.InventoryPath && r.Status == http.StatusOK:
				seen++
			case r.Path == agentapi.HeartbeatPath && seen == 2 && r.Status == http.StatusOK:
				return true
			}
		}
		return false
	})
}

func TestStopsCleanlyWhileRetrying(t *testing.T) {
	srv := newFakeServer(t, func(string, int) int { return http.StatusBadGateway })
	done, cancel := runAgent(t, newMock(t, "dgxh100"), srv.URL)
	waitUntil(t, "a few attempts", func() bool { return len(srv.requests()) >= 3 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v, want nil on a clean stop", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("agent did not stop")
	}
}

func TestNVMLInitFailure(t *testing.T) {
	m := newMock(t, "dgxh100")
	m.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	done, _ := runAgent(t, m, "http://127.0.0.1:1")
	err := <-done
	var ie *NVMLInitError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "NVML could not be loaded (no NVIDIA driver on this host?)") {
		t.Fatalf("Run: %v", err)
	}
}
