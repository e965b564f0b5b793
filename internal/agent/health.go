package agent

import (
	"log/slog"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Health values as the server expects them.
const (
	HealthHealthy = "healthy"
	HealthFailed  = "failed"
)

// Failure reasons other than "XID n".
const (
	ReasonRowRemapFailure     = "row remap failure"
	ReasonPendingRetiredPages = "pending retired pages"
)

// HealthState holds each GPU's health. A failure is sticky: the first reason
// wins and nothing in the agent clears it, because a GPU that threw a
// critical XID needs a reset or a replacement, and a failure seen while the
// server was unreachable must still be in the next report that gets through.
type HealthState struct {
	log *slog.Logger

	mu     sync.Mutex
	order  []string // UUIDs in discovery order
	byUUID map[string]*GPU
	failed map[string]string // UUID -> reason

	// memCheckOff remembers GPUs on which a memory-error query is not
	// supported (row remapping predates Ampere, page retirement is gone on
	// some newer parts), so they are not queried again.
	memCheckOff map[memCheckKey]bool
	// memCheckWarned keeps a persistently failing query from logging on
	// every heartbeat.
	memCheckWarned map[memCheckKey]bool
}

type memCheckKey struct {
	uuid  string
	check string
}

// NewHealthState starts every GPU healthy, except those whose identity could
// not be read at discovery.
func NewHealthState(gpus []*GPU, log *slog.Logger) *HealthState {
	h := &HealthState{
		log:            log,
		byUUID:         make(map[string]*GPU, len(gpus)),
		failed:         make(map[string]string),
		memCheckOff:    make(map[memCheckKey]bool),
		memCheckWarned: make(map[memCheckKey]bool),
	}
	for _, g := range gpus {
		h.byUUID[g.UUID] = g
		h.order = append(h.order, g.UUID)
	}
	for _, g := range gpus {
		if g.initErr != "" {
			h.MarkFailed(g.UUID, g.initErr)
		}
	}
	return h
}

// MarkFailed fails the GPU with uuid unless it has already failed, and says
// whether this call was the one that failed it. Unknown UUIDs are ignored.
func (h *HealthState) MarkFailed(uuid, reason string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, ok := h.byUUID[uuid]
	if !ok {
		return false
	}
	if _, done := h.failed[uuid]; done {
		return false
	}
	h.failed[uuid] = reason
	h.log.Error("GPU failed", "index", g.Index, "uuid", uuid, "address", g.Address, "reason", reason)
	return true
}

// MarkAllFailed fails every GPU not yet failed, for errors that cannot be
// pinned on one GPU.
func (h *HealthState) MarkAllFailed(reason string) {
	for _, uuid := range h.uuids() {
		h.MarkFailed(uuid, reason)
	}
}

// Status returns "healthy" or "failed" and, when failed, the reason.
func (h *HealthState) Status(uuid string) (health, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r, ok := h.failed[uuid]; ok {
		return HealthFailed, r
	}
	return HealthHealthy, ""
}

func (h *HealthState) uuids() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.order...)
}

// CheckMemoryErrors polls the conditions NVML exposes only as state, not as
// events: a failed row remap and retired pages awaiting a reset. Both mean
// the GPU's memory can no longer be trusted until it is reset or replaced.
// They are not in the device plugin's checks; they are gpugraph's addition.
func (h *HealthState) CheckMemoryErrors(gpus []*GPU) {
	for _, g := range gpus {
		if g.device == nil || h.isFailed(g.UUID) { // no handle: passed through to a VM
			continue
		}
		h.checkRemappedRows(g)
		h.checkRetiredPages(g)
	}
}

func (h *HealthState) isFailed(uuid string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.failed[uuid]
	return ok
}

func (h *HealthState) checkRemappedRows(g *GPU) {
	const check = "GetRemappedRows"
	if !h.memCheckEnabled(g, check) {
		return
	}
	_, _, _, failureOccurred, ret := g.device.GetRemappedRows()
	if !h.memCheckResult(g, check, ret) {
		return
	}
	if failureOccurred {
		h.MarkFailed(g.UUID, ReasonRowRemapFailure)
	}
}

func (h *HealthState) checkRetiredPages(g *GPU) {
	const check = "GetRetiredPagesPendingStatus"
	if !h.memCheckEnabled(g, check) {
		return
	}
	pending, ret := g.device.GetRetiredPagesPendingStatus()
	if !h.memCheckResult(g, check, ret) {
		return
	}
	if pending == nvml.FEATURE_ENABLED {
		h.MarkFailed(g.UUID, ReasonPendingRetiredPages)
	}
}

func (h *HealthState) memCheckEnabled(g *GPU, check string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.memCheckOff[memCheckKey{g.UUID, check}]
}

// memCheckResult says whether a query's answer can be used. A query that
// errors is not taken as a failure: it says nothing about the memory.
func (h *HealthState) memCheckResult(g *GPU, check string, ret nvml.Return) bool {
	key := memCheckKey{g.UUID, check}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch ret {
	case nvml.SUCCESS:
		delete(h.memCheckWarned, key)
		return true
	case nvml.ERROR_NOT_SUPPORTED:
		h.memCheckOff[key] = true
		h.log.Info("memory-error check not supported on this GPU; skipping it", "index", g.Index, "uuid", g.UUID, "check", check)
	default:
		if !h.memCheckWarned[key] {
			h.memCheckWarned[key] = true
			h.log.Warn("memory-error check failed; will retry", "index", g.Index, "uuid", g.UUID, "check", check, "err", ret)
		}
	}
	return false
}
