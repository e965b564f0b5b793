package agent

import (
	"strings"
	"testing"

	"gpugraph/internal/agent/sim"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestDiscoverMockServers(t *testing.T) {
	dgxH := []string{"0000:1B:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0", "0000:9D:00.0", "0000:C3:00.0", "0000:D1:00.0", "0000:DF:00.0"}
	tests := []struct {
		model     string
		name      string
		memory    uint64
		addresses []string
	}{
		{"dgxa100", "Mock NVIDIA A100-SXM4-40GB", 40960 << 20,
			[]string{"0000:07:00.0", "0000:0F:00.0", "0000:47:00.0", "0000:4E:00.0", "0000:87:00.0", "0000:90:00.0", "0000:B7:00.0", "0000:BD:00.0"}},
		{"dgxh100", "NVIDIA H100 80GB HBM3", 81920 << 20, dgxH},
		{"dgxh200", "NVIDIA H200 141GB HBM3e", 144384 << 20, dgxH},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			m := newMock(t, tt.model)
			if ret := m.Init(); ret != nvml.SUCCESS {
				t.Fatal(ret)
			}
			gpus, err := Discover(m, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(gpus) != 8 {
				t.Fatalf("found %d GPUs, want 8", len(gpus))
			}
			seen := map[string]bool{}
			for i, g := range gpus {
				if g.Index != i {
					t.Errorf("GPU %d: index %d", i, g.Index)
				}
				if !strings.HasPrefix(g.UUID, "GPU-") || len(g.UUID) != len("GPU-")+36 || seen[g.UUID] {
					t.Errorf("GPU %d: bad or duplicate UUID %q", i, g.UUID)
				}
				seen[g.UUID] = true
				if g.Address != tt.addresses[i] {
					t.Errorf("GPU %d: address %q, want %q", i, g.Address, tt.addresses[i])
				}
				if g.Name != tt.name {
					t.Errorf("GPU %d: name %q, want %q", i, g.Name, tt.name)
				}
				if g.MemoryBytes != tt.memory {
					t.Errorf("GPU %d: memory %d, want %d", i, g.MemoryBytes, tt.memory)
				}
				if g.initErr != "" {
					t.Errorf("GPU %d: %s", i, g.initErr)
				}
			}
		})
	}
}

// A mock node must keep its GPU UUIDs across restarts, and two mock nodes
// must not share any.
func TestMockUUIDsStablePerNode(t *testing.T) {
	uuids := func(seed string) []string {
		m, err := sim.NewServer("dgxh100", seed)
		if err != nil {
			t.Fatal(err)
		}
		gpus, err := Discover(m, testLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range gpus {
			out = append(out, g.UUID)
		}
		return out
	}
	a1, a2, b := uuids("node-a"), uuids("node-a"), uuids("node-b")
	for i := range a1 {
		if a1[i] != a2[i] {
			t.Errorf("GPU %d: UUID changed across restarts: %s, %s", i, a1[i], a2[i])
		}
		for _, u := range b {
			if u == a1[i] {
				t.Errorf("nodes a and b share UUID %s", u)
			}
		}
	}
}

func TestDiscoverUnreadableGPU(t *testing.T) {
	m := newMock(t, "dgxh100")
	m.Device(2).GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.ERROR_GPU_IS_LOST }
	m.Device(5).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
	log := testLogger(t)
	gpus, err := Discover(m, log)
	if err != nil {
		t.Fatal(err)
	}
	// No UUID, nothing to key the GPU on: left out.
	if len(gpus) != 7 {
		t.Fatalf("found %d GPUs, want 7", len(gpus))
	}
	h := NewHealthState(gpus, log)
	health, reason := h.Status(gpus[2].UUID)
	if health != HealthFailed || reason != "NVML GetPciInfo: ERROR_GPU_IS_LOST" {
		t.Errorf("GPU with unreadable PCI info: %s %q", health, reason)
	}
	if health, _ := h.Status(gpus[3].UUID); health != HealthHealthy {
		t.Errorf("GPU 3: %s", health)
	}
}

// TestBusIDOf: a GPU's address by its UUID, as the inventory spells it.
func TestBusIDOf(t *testing.T) {
	m := newMock(t, "dgxa100")
	if ret := m.Init(); ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	gpus, err := Discover(m, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	lookup := BusIDOf(m)
	if a, err := lookup(gpus[2].UUID); a != "0000:47:00.0" || err != nil {
		t.Errorf("GPU 2: %q, %v; want 0000:47:00.0", a, err)
	}
	if _, err := lookup("GPU-nope"); err == nil || err.Error() != "no such GPU on this node" {
		t.Errorf("an unknown GPU: %v", err)
	}
}
