package agent

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"gpugraph/internal/agent/agentapi"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// reporter sends the inventory, then heartbeats.
type reporter struct {
	cfg    Config
	log    *slog.Logger
	client *Client
	gpus   []*GPU
	health *HealthState

	heartbeats      int // accepted so far
	warnedNoRuntime bool
	book            *assignmentBook // for the exporter's pod labels
	sequence        int64           // of the last report sent
	consoles        consolePusher
}

// nextSequence numbers a report: the current time in Unix nanoseconds, or
// one more than the last when the clock has not moved past it. So it grows
// across restarts without being stored (a restarted agent starts above
// every number it sent before, as long as the clock does not go back).
func (r *reporter) nextSequence() int64 {
	r.sequence = max(r.sequence+1, time.Now().UnixNano())
	return r.sequence
}

// errReregister asks the loop to send the inventory again.
var errReregister = errors.New("server does not know this node")

func (r *reporter) run(ctx context.Context) error {
	for {
		if err := r.sendInventory(ctx); err != nil {
			return err
		}
		err := r.heartbeatLoop(ctx)
		if !errors.Is(err, errReregister) {
			return err
		}
	}
}

// sendInventory retries until the server takes the inventory: heartbeats
// for a node the server has not registered would be refused anyway.
func (r *reporter) sendInventory(ctx context.Context) error {
	b := r.cfg.Backoff
	for {
		r.health.CheckMemoryErrors(r.gpus)
		var resp agentapi.InventoryResponse
		err := r.client.PostJSON(ctx, agentapi.InventoryPath, r.inventory(), &resp)
		if err == nil {
			r.log.Info("inventory accepted", "nodeId", resp.NodeID, "gpus", len(r.gpus))
			r.assign(resp.Workloads)
			return nil
		}
		if isAuth(err) {
			return err
		}
		if !r.sleepRetry(ctx, &b, "inventory", err) {
			return ctx.Err()
		}
	}
}

// heartbeatLoop sends one heartbeat at once, then one per interval. A
// heartbeat that fails is retried with backoff, each attempt rebuilt from
// the current state, so a GPU failure seen while the server was away is in
// the first heartbeat that gets through.
func (r *reporter) heartbeatLoop(ctx context.Context) error {
	b := r.cfg.Backoff
	for {
		r.health.CheckMemoryErrors(r.gpus)
		var resp agentapi.HeartbeatResponse
		err := r.client.PostJSON(ctx, agentapi.HeartbeatPath, r.heartbeat(), &resp)
		var se *StatusError
		switch {
		case err == nil:
			r.assign(resp.Workloads)
			b.Reset()
			r.heartbeats++
			r.log.Debug("heartbeat accepted", "n", r.heartbeats)
			r.pushConsoles(ctx, resp.Workloads)
			if r.cfg.AfterHeartbeat != nil {
				r.cfg.AfterHeartbeat(r.heartbeats)
			}
			if !sleep(ctx, r.cfg.Interval) {
				return ctx.Err()
			}
		case isAuth(err):
			return err
		case errors.As(err, &se) && se.Status == http.StatusNotFound:
			// The server lost or dropped this node (e.g. a fresh
			// database): register again rather than beat into the void.
			r.log.Warn("server does not know this node; sending the inventory again", "err", err)
			if !r.sleepRetry(ctx, &b, "heartbeat", err) {
				return ctx.Err()
			}
			return errReregister
		default:
			if !r.sleepRetry(ctx, &b, "heartbeat", err) {
				return ctx.Err()
			}
		}
	}
}

func (r *reporter) sleepRetry(ctx context.Context, b *Backoff, what string, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	d := b.Next()
	r.log.Warn("report failed; retrying", "report", what, "err", err, "retryIn", d.Round(time.Millisecond))
	return sleep(ctx, d)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// assign hands the server's list to the runtime; without one, it says once
// that assignments are not run here.
func (r *reporter) assign(as []agentapi.Assignment) {
	if r.book != nil {
		r.book.set(as)
	}
	if r.cfg.Runtime != nil {
		r.cfg.Runtime.Assign(as)
		return
	}
	if len(as) > 0 && !r.warnedNoRuntime {
		r.warnedNoRuntime = true
		r.log.Warn("the server assigned workloads to this node, but this agent has no container runtime: it runs and reports none",
			"workloads", len(as))
	}
}

func (r *reporter) version() string {
	if r.cfg.AgentVersion != "" {
		return r.cfg.AgentVersion
	}
	return Version
}

func (r *reporter) inventory() agentapi.InventoryRequest {
	req := agentapi.InventoryRequest{
		NodeName:     r.cfg.NodeName,
		ClusterID:    r.cfg.ClusterID,
		AgentVersion: r.version(),
		CPUCores:     r.cfg.Host.CPUCores,
		RAMGb:        r.cfg.Host.RAMGB,
		DiskGb:       r.cfg.Host.DiskGB,
		GPUs:         make([]agentapi.InventoryGPU, 0, len(r.gpus)),
		Sequence:     r.nextSequence(),
	}
	for _, g := range r.gpus {
		health, reason := r.health.Status(g.UUID)
		req.GPUs = append(req.GPUs, agentapi.InventoryGPU{
			Index:        g.Index,
			UUID:         g.UUID,
			Address:      g.Address,
			Name:         g.Name,
			MemoryBytes:  g.MemoryBytes,
			Health:       health,
			FailedReason: reason,
		})
	}
	return req
}

func (r *reporter) heartbeat() agentapi.HeartbeatRequest {
	req := agentapi.HeartbeatRequest{
		NodeName:     r.cfg.NodeName,
		AgentVersion: r.version(),
		GPUs:         make([]agentapi.HeartbeatGPU, 0, len(r.gpus)),
		Sequence:     r.nextSequence(),
	}
	if r.cfg.Runtime != nil {
		req.Workloads = r.cfg.Runtime.Report()
	}
	for _, g := range r.gpus {
		health, reason := r.health.Status(g.UUID)
		util, used := r.usage(g)
		req.GPUs = append(req.GPUs, agentapi.HeartbeatGPU{
			UUID:            g.UUID,
			Health:          health,
			FailedReason:    reason,
			Utilization:     util,
			MemoryUsedBytes: used,
		})
	}
	return req
}

// usage reads live figures; a GPU that cannot answer (MIG mode, lost,
// passed through to a VM) reports zeros rather than holding up the heartbeat.
func (r *reporter) usage(g *GPU) (utilization int, memUsed uint64) {
	if g.device == nil {
		return 0, 0 // passed through to a VM: NVML has no handle on it
	}
	if u, ret := g.device.GetUtilizationRates(); ret == nvml.SUCCESS {
		utilization = int(min(u.Gpu, 100))
	} else {
		r.log.Debug("GetUtilizationRates", "index", g.Index, "err", ret)
	}
	if m, ret := g.device.GetMemoryInfo(); ret == nvml.SUCCESS {
		memUsed = m.Used
	} else {
		r.log.Debug("GetMemoryInfo", "index", g.Index, "err", ret)
	}
	return utilization, memUsed
}
