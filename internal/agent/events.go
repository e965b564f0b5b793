package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// xidEventMask is what the device plugin registers for. ECC events are
// registered too but, as in the plugin, only XID events change health: an
// uncorrectable ECC error that matters also raises its own XID (48, 63, 64…).
const xidEventMask = uint64(nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError | nvml.EventTypeSingleBitEccError)

// XIDWatcher fails GPUs on critical XID events, following the logic of
// NVIDIA's k8s-device-plugin (internal/rm/health.go, checkHealth).
type XIDWatcher struct {
	lib    nvml.Interface
	gpus   []*GPU
	health *HealthState
	policy XIDPolicy
	log    *slog.Logger
	// waitTimeout bounds each EventSet.Wait, and so how long a shutdown
	// waits for the watcher; the plugin uses 5s, an agent wants to stop
	// faster.
	waitTimeout time.Duration

	set nvml.EventSet
}

// NewXIDWatcher creates the event set and registers every GPU with it.
// GPUs the plugin would mark unhealthy at this stage (supported events
// unknown, registration refused) are failed here; a GPU too old for events
// only gets a warning.
func NewXIDWatcher(lib nvml.Interface, gpus []*GPU, health *HealthState, policy XIDPolicy, waitTimeout time.Duration, log *slog.Logger) (*XIDWatcher, error) {
	set, ret := lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML EventSetCreate: %v", ret)
	}
	w := &XIDWatcher{lib: lib, gpus: gpus, health: health, policy: policy, log: log, waitTimeout: waitTimeout, set: set}
	for _, g := range gpus {
		if g.device == nil {
			continue // passed through to a VM: its guest's driver sees its XIDs
		}
		supported, ret := g.device.GetSupportedEventTypes()
		if ret != nvml.SUCCESS {
			health.MarkFailed(g.UUID, fmt.Sprintf("NVML GetSupportedEventTypes: %v", ret))
			continue
		}
		switch ret := g.device.RegisterEvents(xidEventMask&supported, set); ret {
		case nvml.SUCCESS:
		case nvml.ERROR_NOT_SUPPORTED:
			log.Warn("GPU too old for XID health checking", "index", g.Index, "uuid", g.UUID)
		default:
			health.MarkFailed(g.UUID, fmt.Sprintf("NVML RegisterEvents: %v", ret))
		}
	}
	return w, nil
}

// Run waits for events until ctx is done, then frees the event set.
func (w *XIDWatcher) Run(ctx context.Context) {
	defer w.set.Free()
	timeoutMs := uint32(max(w.waitTimeout.Milliseconds(), 1))
	for ctx.Err() == nil {
		e, ret := w.set.Wait(timeoutMs)
		switch ret {
		case nvml.SUCCESS:
			w.handle(e)
		case nvml.ERROR_TIMEOUT:
		default:
			// The plugin fails every GPU when it can no longer watch
			// them; pausing keeps a persistent error from spinning.
			w.health.MarkAllFailed(fmt.Sprintf("NVML event wait failed: %v", ret))
			select {
			case <-ctx.Done():
			case <-time.After(w.waitTimeout):
			}
		}
	}
}

func (w *XIDWatcher) handle(e nvml.EventData) {
	if e.EventType != nvml.EventTypeXidCriticalError {
		// Corrected single-bit ECC errors can be frequent: keep them
		// out of the default log.
		w.log.Debug("skipping non-XID event", "type", e.EventType, "data", e.EventData)
		return
	}
	xid := e.EventData
	if w.policy.Ignores(xid) {
		w.log.Info("ignoring XID", "xid", xid, "gpuInstance", e.GpuInstanceId, "computeInstance", e.ComputeInstanceId)
		return
	}
	reason := fmt.Sprintf("XID %d", xid)
	var uuid string
	ret := nvml.ERROR_INVALID_ARGUMENT
	if e.Device != nil {
		uuid, ret = e.Device.GetUUID()
	}
	if ret != nvml.SUCCESS {
		// Not knowing which GPU faulted, the plugin fails them all.
		w.log.Error("critical XID on an unidentified GPU", "xid", xid, "err", ret)
		w.health.MarkAllFailed(reason + " on an unidentified GPU")
		return
	}
	// The agent reports whole GPUs, so an XID in any MIG instance fails
	// its parent: the plugin's per-instance matching does not apply.
	if !w.health.MarkFailed(uuid, reason) {
		w.log.Info("critical XID on a GPU already failed or not in the inventory", "xid", xid, "uuid", uuid)
	}
}
