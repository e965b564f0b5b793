package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// GPU is one physical GPU as discovered at start-up. Identity fields never
// change afterwards; live figures are read on each heartbeat.
type GPU struct {
	Index       int
	UUID        string
	Address     string // normalised PCI bus id, e.g. "0000:3B:00.0"
	Name        string
	MemoryBytes uint64

	device nvml.Device
	// initErr records a failed identity read; such a GPU is still reported
	// (as failed) so the server sees it rather than a silently smaller node.
	initErr string
}

// Discover enumerates the GPUs behind lib, which must already be
// initialised. A GPU whose handle or UUID cannot be read is left out, since
// the server has no key to file it under; any other failed read makes the
// GPU fail with the NVML error as its reason, as the device plugin marks
// devices it cannot query unhealthy.
func Discover(lib nvml.Interface, log *slog.Logger) ([]*GPU, error) {
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML DeviceGetCount: %v", ret)
	}
	gpus := make([]*GPU, 0, count)
	for i := range count {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			log.Error("GPU left out of the inventory: no NVML handle", "index", i, "err", ret)
			continue
		}
		uuid, ret := dev.GetUUID()
		if ret != nvml.SUCCESS {
			log.Error("GPU left out of the inventory: no UUID", "index", i, "err", ret)
			continue
		}
		g := &GPU{Index: i, UUID: uuid, device: dev}
		g.readIdentity(i)
		gpus = append(gpus, g)
	}
	return gpus, nil
}

func (g *GPU) readIdentity(enumIndex int) {
	fail := func(call string, ret nvml.Return) {
		if g.initErr == "" {
			g.initErr = fmt.Sprintf("NVML %s: %v", call, ret)
		}
	}
	if idx, ret := g.device.GetIndex(); ret == nvml.SUCCESS {
		g.Index = idx
	} else {
		// The handle came from DeviceGetHandleByIndex(enumIndex), which
		// is the same index by definition.
		g.Index = enumIndex
	}
	if name, ret := g.device.GetName(); ret == nvml.SUCCESS {
		g.Name = name
	} else {
		fail("GetName", ret)
	}
	if mem, ret := g.device.GetMemoryInfo(); ret == nvml.SUCCESS {
		g.MemoryBytes = mem.Total
	} else {
		fail("GetMemoryInfo", ret)
	}
	pci, ret := g.device.GetPciInfo()
	if ret != nvml.SUCCESS {
		fail("GetPciInfo", ret)
		return
	}
	raw := cString(pci.BusId[:])
	if raw == "" {
		raw = cString(pci.BusIdLegacy[:])
	}
	addr, err := NormalizeBusID(raw)
	if err != nil {
		if g.initErr == "" {
			g.initErr = "NVML GetPciInfo: " + err.Error()
		}
		return
	}
	g.Address = addr
}

// cString reads NVML's NUL-terminated char arrays.
func cString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

// GPUIdentity is what the inventory says of a GPU that does not change
// while it is on the node: what a runtime that passes GPUs through to VMs
// keeps of each, since NVML sees no GPU bound to vfio-pci.
type GPUIdentity struct {
	Index       int    `json:"index"`
	UUID        string `json:"uuid"`
	Address     string `json:"address"`
	Name        string `json:"name"`
	MemoryBytes uint64 `json:"memoryBytes"`
}

// PassthroughRuntime is implemented by a Runtime that passes GPUs through
// to VMs (QEMU's, with vfio-pci). PassedThroughGPUs answers the GPUs it
// knows (from its VMs' records) that are bound to vfio-pci now: NVML does
// not see them, so Run adds them to the inventory as last known rather
// than let the server think them gone.
type PassthroughRuntime interface {
	PassedThroughGPUs() []GPUIdentity
}

// withPassedThrough answers gpus and, after them, each GPU rt passed
// through that NVML did not list, with no NVML handle: it is reported
// healthy with no live figures (its guest has it), as last known, its
// index too unless one of gpus has it now.
func withPassedThrough(gpus []*GPU, rt Runtime, log *slog.Logger) []*GPU {
	p, ok := rt.(PassthroughRuntime)
	if !ok {
		return gpus
	}
	seen := make(map[string]bool, len(gpus))
	used := make(map[int]bool, len(gpus))
	for _, g := range gpus {
		seen[g.UUID] = true
		used[g.Index] = true
	}
	for _, id := range p.PassedThroughGPUs() {
		if id.UUID == "" || seen[id.UUID] {
			continue
		}
		seen[id.UUID] = true
		idx := id.Index
		if used[idx] {
			// NVML numbers only the GPUs it sees, so another may have
			// this one's index now; the server takes one GPU per index
			// (an inventory with two is refused), so it gets the lowest
			// free one.
			for idx = 0; used[idx]; idx++ {
			}
			log.Warn("a GPU bound to vfio-pci is reported under another index: NVML gave its last known one to another GPU", "uuid", id.UUID, "was", id.Index, "index", idx)
		}
		used[idx] = true
		log.Info("GPU bound to vfio-pci (NVML does not see it) kept in the inventory as last known", "index", idx, "uuid", id.UUID, "address", id.Address)
		gpus = append(gpus, &GPU{Index: idx, UUID: id.UUID, Address: id.Address, Name: id.Name, MemoryBytes: id.MemoryBytes})
	}
	return gpus
}

// IdentityOf answers a lookup of a GPU's identity by its UUID through lib
// (initialised by the time a workload is assigned). What NVML answered
// once is kept for the rest of the run: a GPU moved to vfio-pci for a VM
// vanishes from NVML, and its next VM still needs its address.
func IdentityOf(lib nvml.Interface) func(uuid string) (GPUIdentity, error) {
	var mu sync.Mutex
	known := map[string]GPUIdentity{}
	return func(uuid string) (GPUIdentity, error) {
		gpus, err := Discover(lib, slog.New(slog.DiscardHandler))
		mu.Lock()
		defer mu.Unlock()
		var found *GPU
		for _, g := range gpus {
			if g.Address != "" {
				known[g.UUID] = GPUIdentity{Index: g.Index, UUID: g.UUID, Address: g.Address, Name: g.Name, MemoryBytes: g.MemoryBytes}
			}
			if g.UUID == uuid {
				found = g
			}
		}
		if id, ok := known[uuid]; ok {
			return id, nil
		}
		switch {
		case err != nil:
			return GPUIdentity{}, err
		case found != nil:
			return GPUIdentity{}, fmt.Errorf("its PCI address cannot be read: %s", found.initErr)
		}
		return GPUIdentity{}, errors.New("no such GPU on this node")
	}
}

// BusIDOf answers a lookup of a GPU's PCI address by its UUID through
// lib, in the spelling the inventory reports: what a runtime passes
// through to a VM.
func BusIDOf(lib nvml.Interface) func(uuid string) (string, error) {
	return BusIDs(IdentityOf(lib))
}

// BusIDs answers the addresses of what ids answers.
func BusIDs(ids func(uuid string) (GPUIdentity, error)) func(uuid string) (string, error) {
	return func(uuid string) (string, error) {
		id, err := ids(uuid)
		return id.Address, err
	}
}
