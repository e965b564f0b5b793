package agent

import (
	"fmt"
	"testing"

	"gpugraph/internal/agent/agentapi"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// hiding is NVML with one GPU gone from it, as a GPU moved to vfio-pci is.
type hiding struct {
	nvml.Interface
	uuid string
}

func (h hiding) visible() []nvml.Device {
	n, _ := h.Interface.DeviceGetCount()
	var out []nvml.Device
	for i := range n {
		d, _ := h.Interface.DeviceGetHandleByIndex(i)
		if u, _ := d.GetUUID(); u != h.uuid {
			out = append(out, d)
		}
	}
	return out
}

func (h hiding) DeviceGetCount() (int, nvml.Return) { return len(h.visible()), nvml.SUCCESS }

func (h hiding) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	v := h.visible()
	if i < 0 || i >= len(v) {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return v[i], nvml.SUCCESS
}

// passing is a runtime that passed GPUs through to VMs.
type passing struct {
	fakeRuntime
	ids []GPUIdentity
}

type fakeRuntime struct{}

func (fakeRuntime) Assign([]agentapi.Assignment)      {}
func (fakeRuntime) Report() []agentapi.WorkloadReport { return nil }

func (p passing) PassedThroughGPUs() []GPUIdentity { return p.ids }

// TestPassedThroughGPUsStayReported: a GPU that vanished from NVML (moved
// to vfio-pci for a VM) is still answered by IdentityOf as NVML last
// answered it, and, when the runtime says it passed it through, stays in
// the inventory with its UUID, index, model and address, healthy, with
// no live figures; one NVML still lists is not added twice.
func TestPassedThroughGPUsStayReported(t *testing.T) {
	m := newMock(t, "dgxh100")
	if ret := m.Init(); ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	all, err := Discover(m, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	gone := all[2]
	lib := &hiding{Interface: m}
	ids := IdentityOf(lib)
	if _, err := ids(gone.UUID); err != nil {
		t.Fatal(err)
	}
	lib.uuid = gone.UUID
	id, err := ids(gone.UUID)
	want := GPUIdentity{Index: 2, UUID: gone.UUID, Address: "0000:52:00.0", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81920 << 20}
	if err != nil || id != want {
		t.Fatalf("after it left NVML: %+v, %v; want %+v", id, err, want)
	}
	if a, err := BusIDs(ids)(gone.UUID); a != "0000:52:00.0" || err != nil {
		t.Errorf("its address after it left NVML: %q, %v", a, err)
	}
	if _, err := IdentityOf(lib)(gone.UUID); err == nil || err.Error() != "no such GPU on this node" {
		t.Errorf("a lookup that never saw it: %v, want no such GPU", err)
	}

	seen, err := Discover(lib, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 7 {
		t.Fatalf("NVML lists %d GPUs, want 7", len(seen))
	}
	gpus := withPassedThrough(seen, passing{ids: []GPUIdentity{want, {UUID: all[0].UUID, Index: 0}}}, testLogger(t))
	if len(gpus) != 8 {
		t.Fatalf("inventory of %d GPUs, want 8", len(gpus))
	}
	if g := gpus[7]; fmt.Sprint(GPUIdentity{g.Index, g.UUID, g.Address, g.Name, g.MemoryBytes}) != fmt.Sprint(want) || g.device != nil {
		t.Fatalf("the passed-through GPU: %+v", g)
	}
	// One whose index NVML now gives another GPU (NVML numbers only the
	// GPUs it sees) takes the lowest free one: the server refuses an
	// inventory with two GPUs of one index.
	renumbered := withPassedThrough(seen[:len(seen):len(seen)], passing{ids: []GPUIdentity{{Index: 5, UUID: "GPU-x"}, want}}, testLogger(t))
	var got []string
	for _, g := range renumbered[7:] {
		got = append(got, fmt.Sprint(g.UUID, "/", g.Index))
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{"GPU-x/2", gone.UUID + "/8"}) {
		t.Errorf("indexes of the kept GPUs %q, want GPU-x at 2 (free), %s at 8 (its 2 taken)", got, gone.UUID)
	}
	if got := withPassedThrough(seen, fakeRuntime{}, testLogger(t)); len(got) != 7 {
		t.Errorf("a runtime that passes nothing through: %d GPUs, want 7", len(got))
	}

	health := NewHealthState(gpus, testLogger(t))
	health.CheckMemoryErrors(gpus)
	if _, err := NewXIDWatcher(lib, gpus, health, NewXIDPolicy(nil, false), 0, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	r := &reporter{cfg: Config{Runtime: fakeRuntime{}}, log: testLogger(t), gpus: gpus, health: health}
	inv := r.inventory()
	if got := inv.GPUs[7]; got != (agentapi.InventoryGPU{Index: 2, UUID: gone.UUID, Address: "0000:52:00.0", Name: "NVIDIA H100 80GB HBM3",
		MemoryBytes: 81920 << 20, Health: HealthHealthy}) {
		t.Errorf("inventory: %+v", got)
	}
	hb := r.heartbeat()
	if got := hb.GPUs[7]; got != (agentapi.HeartbeatGPU{UUID: gone.UUID, Health: HealthHealthy}) {
		t.Errorf("heartbeat: %+v", got)
	}
}
