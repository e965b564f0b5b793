package agent

import (
	"errors"
	"fmt"
	"log/slog"

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

// BusIDOf answers a lookup of a GPU's PCI address by its UUID through
// lib (initialised by the time a workload is assigned), in the spelling
// the inventory reports: what a runtime passes through to a VM.
func BusIDOf(lib nvml.Interface) func(uuid string) (string, error) {
	return func(uuid string) (string, error) {
		gpus, err := Discover(lib, slog.New(slog.DiscardHandler))
		if err != nil {
			return "", err
		}
		for _, g := range gpus {
			if g.UUID != uuid {
				continue
			}
			if g.Address == "" {
				return "", fmt.Errorf("its PCI address cannot be read: %s", g.initErr)
			}
			return g.Address, nil
		}
		return "", errors.New("no such GPU on this node")
	}
}
