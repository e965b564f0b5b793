// Package sim simulates what the node agent runs on, for the agent's
// --mock flag, the demo's in-process agents and tests: one of go-nvml's
// simulated DGX servers completed with what the agent reads (PCI bus ids,
// utilization and memory use, event sets with injectable XIDs, the
// row-remap and retired-page queries), the XIDs --mock-xid raises, and a
// container runtime (Runtime).
//
// The real agent (package agent) does not import this package, so the
// agent binary links go-nvml's mock packages only through cmd/agent's
// --mock flag; layering_test.go holds it. Nor does this package import the
// agent: it simulates the hardware the agent reads, through nvml.Interface,
// and the agent's own tests run on it.
package sim

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// Models are the simulated servers --mock accepts.
var Models = []string{"dgxa100", "dgxh100", "dgxh200"}

// HostInfo is a simulated server's non-GPU capacity. It has the fields of
// agent.HostInfo, so agent.HostInfo(s.HostInfo()) converts it.
type HostInfo struct {
	CPUCores int
	RAMGB    int
	DiskGB   int
}

// model completes one of go-nvml's simulated DGX servers. Bus numbers are
// plausible DGX-style ones spread over both sockets, so that addresses
// carry hex letters. Host figures are from the DGX data sheets, in the
// units agent.ReadHostInfo uses: logical CPUs, and system memory and
// internal NVMe data storage in GiB.
type model struct {
	new   func() *server.Server
	buses [8]uint32
	host  HostInfo
}

var models = map[string]model{
	// DGX A100 320GB: 2× EPYC 7742 (256 threads), 1 TiB RAM, 15 TB NVMe.
	"dgxa100": {
		new:   dgxa100.New,
		buses: [8]uint32{0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD},
		host:  HostInfo{CPUCores: 256, RAMGB: 1024, DiskGB: 13969},
	},
	// DGX H100: 2× Xeon Platinum 8480C (224 threads), 2 TiB RAM, 30 TB NVMe.
	"dgxh100": {
		new:   dgxh100.New,
		buses: [8]uint32{0x1B, 0x43, 0x52, 0x61, 0x9D, 0xC3, 0xD1, 0xDF},
		host:  HostInfo{CPUCores: 224, RAMGB: 2048, DiskGB: 27939},
	},
	// DGX H200 shares the DGX H100 chassis.
	"dgxh200": {
		new:   dgxh200.New,
		buses: [8]uint32{0x1B, 0x43, 0x52, 0x61, 0x9D, 0xC3, 0xD1, 0xDF},
		host:  HostInfo{CPUCores: 224, RAMGB: 2048, DiskGB: 27939},
	},
}

// noInstance is NVML's GPU/compute-instance id on events for a whole GPU.
const noInstance = 0xFFFFFFFF

// supportedEvents is what the simulated GPUs claim to support: the XID and
// ECC events, which the agent registers, plus P-state and clock changes,
// which it must mask out.
const supportedEvents = uint64(nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError | nvml.EventTypeSingleBitEccError |
	nvml.EventTypePState | nvml.EventTypeClock)

// Server is one of go-nvml's simulated DGX servers with the parts the
// agent needs wired in: PCI bus ids, utilization and memory use, event sets
// with injectable XIDs, and the row-remap and retired-page queries.
type Server struct {
	*server.Server
	Model string

	host HostInfo
	gpus []*gpu
}

type gpu struct {
	dev *server.Device

	mu             sync.Mutex
	utilization    uint32
	memUsed        uint64
	remapFailed    bool
	retiredPending bool
	registered     map[*eventSet]uint64 // event mask per set
}

// NewServer builds a simulated server of the given model. GPU UUIDs are
// derived from seed (the agent passes its node name), so a mock node keeps
// its GPUs across restarts and two mock nodes never share one.
func NewServer(model, seed string) (*Server, error) {
	mm, ok := models[model]
	if !ok {
		return nil, fmt.Errorf("unknown mock server %q (want one of %v)", model, Models)
	}
	m := &Server{Server: mm.new(), Model: model, host: mm.host}
	m.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return newEventSet(m.forgetSet), nvml.SUCCESS
	}
	for i, d := range m.Devices {
		dev := d.(*server.Device)
		bus := mm.buses[i%len(mm.buses)]
		dev.UUID = gpuUUID(seed, model, i)
		dev.PciBusID = fmt.Sprintf("%08X:%02X:00.0", 0, bus)
		g := &gpu{dev: dev, registered: make(map[*eventSet]uint64)}
		g.wire(bus)
		m.gpus = append(m.gpus, g)
	}
	return m, nil
}

// HostInfo returns the simulated server's CPU, RAM and disk figures.
func (m *Server) HostInfo() HostInfo { return m.host }

// Device returns the simulated GPU at index, for tests that need to make a
// particular NVML call fail.
func (m *Server) Device(index int) *server.Device { return m.gpus[index].dev }

func (g *gpu) wire(bus uint32) {
	d := g.dev
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		p := nvml.PciInfo{Domain: 0, Bus: bus, Device: 0, PciDeviceId: d.Config.PciDeviceId}
		// NVML fills both spellings: eight-digit domain and legacy four.
		putCString(p.BusId[:], fmt.Sprintf("%08X:%02X:00.0", 0, bus))
		putCString(p.BusIdLegacy[:], fmt.Sprintf("%04X:%02X:00.0", 0, bus))
		return p, nvml.SUCCESS
	}
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		total := d.MemoryInfo.Total
		return nvml.Memory{Total: total, Used: g.memUsed, Free: total - g.memUsed}, nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return nvml.Utilization{Gpu: g.utilization}, nvml.SUCCESS
	}
	d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
		return supportedEvents, nvml.SUCCESS
	}
	d.RegisterEventsFunc = func(mask uint64, set nvml.EventSet) nvml.Return {
		s, ok := set.(*eventSet)
		if !ok {
			return nvml.ERROR_INVALID_ARGUMENT
		}
		// Real NVML refuses the whole mask if any bit is unsupported.
		if mask&^supportedEvents != 0 {
			return nvml.ERROR_NOT_SUPPORTED
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.registered[s] |= mask
		return nvml.SUCCESS
	}
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return 0, 0, false, g.remapFailed, nvml.SUCCESS
	}
	d.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.retiredPending {
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		return nvml.FEATURE_DISABLED, nvml.SUCCESS
	}
}

func (m *Server) gpu(index int) (*gpu, error) {
	if index < 0 || index >= len(m.gpus) {
		return nil, fmt.Errorf("mock %s has no GPU %d (it has %d)", m.Model, index, len(m.gpus))
	}
	return m.gpus[index], nil
}

// SetUsage sets what GPU index reports as utilization (percent) and memory
// in use.
func (m *Server) SetUsage(index int, utilization uint32, memUsedBytes uint64) error {
	g, err := m.gpu(index)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.utilization, g.memUsed = utilization, memUsedBytes
	return nil
}

// SetRowRemapFailure sets GetRemappedRows' failure flag on GPU index.
func (m *Server) SetRowRemapFailure(index int, failed bool) error {
	g, err := m.gpu(index)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.remapFailed = failed
	return nil
}

// SetRetiredPagesPending sets GetRetiredPagesPendingStatus on GPU index.
func (m *Server) SetRetiredPagesPending(index int, pending bool) error {
	g, err := m.gpu(index)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.retiredPending = pending
	return nil
}

// ErrNoListener is returned when an event is raised on a GPU that no event
// set watches for it; real NVML would drop it the same way.
var ErrNoListener = errors.New("no event set is registered for this event on this GPU")

// eventHandledTimeout bounds how long RaiseEvent waits for the agent.
const eventHandledTimeout = 5 * time.Second

// RaiseXID raises a critical XID event on GPU index, as the driver would,
// and returns once every watching event set's consumer has handled it.
func (m *Server) RaiseXID(index int, xid uint64) error {
	return m.RaiseEvent(index, nvml.EventTypeXidCriticalError, xid)
}

// RaiseEvent raises an event of eventType (an nvml.EventType* value) with
// data on GPU index and waits until it has been handled.
func (m *Server) RaiseEvent(index int, eventType, data uint64) error {
	g, err := m.gpu(index)
	if err != nil {
		return err
	}
	e := nvml.EventData{
		Device:            g.dev,
		EventType:         eventType,
		EventData:         data,
		GpuInstanceId:     noInstance,
		ComputeInstanceId: noInstance,
	}
	g.mu.Lock()
	var handled []<-chan struct{}
	for s, mask := range g.registered {
		if mask&eventType != 0 {
			handled = append(handled, s.post(e))
		}
	}
	g.mu.Unlock()
	if len(handled) == 0 {
		return fmt.Errorf("GPU %d, event type %d: %w", index, eventType, ErrNoListener)
	}
	timeout := time.NewTimer(eventHandledTimeout)
	defer timeout.Stop()
	for _, done := range handled {
		select {
		case <-done:
		case <-timeout.C:
			return fmt.Errorf("GPU %d: event not handled within %v", index, eventHandledTimeout)
		}
	}
	return nil
}

// forgetSet drops a freed set's registrations, as NVML does.
func (m *Server) forgetSet(s *eventSet) {
	for _, g := range m.gpus {
		g.mu.Lock()
		delete(g.registered, s)
		g.mu.Unlock()
	}
}

// gpuUUID makes a stable, RFC 4122-shaped (version 5 style) GPU UUID.
func gpuUUID(seed, model string, index int) string {
	h := sha1.Sum(fmt.Appendf(nil, "gpugraph-mock/%s/%s/%d", seed, model, index))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func putCString(dst []int8, s string) {
	for i := 0; i < len(s) && i < len(dst)-1; i++ {
		dst[i] = int8(s[i])
	}
}

// SetIdentity gives simulated GPU index the UUID and PCI address of a GPU
// the server already knows, so that an inventory reconciles onto its row
// instead of registering a new GPU (the server's in-process demo agents
// report the demo's GPUs this way). The address must be on PCI domain 0,
// device 0, function 0, as on the simulated DGX servers.
func (m *Server) SetIdentity(index int, uuid, address string) error {
	g, err := m.gpu(index)
	if err != nil {
		return err
	}
	bus, err := domainZeroBus(address)
	if err != nil {
		return fmt.Errorf("mock GPU %d: %w", index, err)
	}
	g.dev.UUID = uuid
	g.dev.PciBusID = fmt.Sprintf("%08X:%02X:00.0", 0, bus)
	g.wire(bus)
	return nil
}

// domainZeroAddress is a PCI address on domain 0, device 0, function 0, its
// domain in NVML's eight digits, the legacy four or fewer.
var domainZeroAddress = regexp.MustCompile(`^0{1,8}:([0-9A-Fa-f]{2}):00\.0$`)

// domainZeroBus is the bus number of such an address.
func domainZeroBus(address string) (uint32, error) {
	m := domainZeroAddress.FindStringSubmatch(address)
	if m == nil {
		return 0, fmt.Errorf("address %q is not domain 0, device 0, function 0 (want 0000:BB:00.0)", address)
	}
	bus, err := strconv.ParseUint(m[1], 16, 8)
	if err != nil {
		return 0, err
	}
	return uint32(bus), nil
}
