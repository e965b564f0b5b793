// Package agents runs the node agent in-process for the demo data set: one
// agent (package agent, on a simulated NVML server and its simulated
// runtime) per demo node that the demo says is online, reporting over
// loopback HTTP to the server's own listener through the real protocol,
// with a node credential of its own: at every start each node is enrolled
// afresh (as the platform operator would, straight in the store) and its
// agent exchanges the one-time bootstrap token over HTTP, keeping the
// credential in memory. So the demo needs no API-key report path, and a VM
// restarted in the playground goes deploying → running within seconds, as
// it would on a real fleet.
//
// Each agent reports its node's own GPUs (their UUIDs and PCI addresses,
// so the inventory reconciles onto the demo's rows) and its node's own
// agentVersion (so the restart outcomes that depend on an old agent
// stay), and no host figures (so the demo's CPU, RAM and disk stay). The
// nodes the demo keeps offline or removed get no agent. A GPU the demo has
// failed is reported healthy by the simulation, and stays failed: the
// server never heals a GPU from a report.
package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"gpugraph/demo"
	"gpugraph/internal/agent"
	"gpugraph/internal/agent/sim"
	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/store"
)

// Loaded reports whether st holds the demo data set: its key Token, with
// nodes.report. It is true after the server loaded the demo into an empty
// database, at this start or an earlier one, and false for any other data.
// (The agents themselves report with node credentials, never that key.)
func Loaded(ctx context.Context, st *store.Store) (bool, error) {
	c, err := (&auth.Authenticator{Store: st}).Lookup(ctx, Token)
	if _, refused := apierr.As(err); refused {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return c.Can(auth.NodesReport), nil
}

// debug writes an agent's lines below WARN at DEBUG: a dozen GPUs found
// per node, every heartbeat's retries, every workload the simulated
// runtime starts. They are routine for the demo, so the server's log at
// its default level keeps only the agents' warnings and errors; at
// --log-level=debug they are all there.
type debug struct{ slog.Handler }

func (h debug) Enabled(ctx context.Context, l slog.Level) bool {
	if l < slog.LevelWarn {
		l = slog.LevelDebug
	}
	return h.Handler.Enabled(ctx, l)
}

func (h debug) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

func (h debug) WithAttrs(as []slog.Attr) slog.Handler { return debug{h.Handler.WithAttrs(as)} }
func (h debug) WithGroup(g string) slog.Handler       { return debug{h.Handler.WithGroup(g)} }

// Options of the in-process agents; zero values take the defaults.
type Options struct {
	Interval   time.Duration // heartbeat period; default 2s
	StartDelay time.Duration // simulated start of a workload; default 2s
	Log        *slog.Logger
}

// Token is the demo key that marks the demo's data (Loaded). It holds
// nodes.report, which only a server in legacy mode accepts.
const Token = "acme-agent"

// enroller is who enrolls the demo's nodes: the system, in the event log
// and the enrollments' createdBy, as "demo".
func enroller() *auth.Caller {
	c := auth.SystemCaller()
	c.KeyID = "demo"
	return c
}

// node is what an agent needs of one demo node.
type node struct {
	Name         string `json:"name"`
	ClusterID    string `json:"clusterId"`
	Status       string `json:"status"`
	AgentVersion string `json:"agentVersion"`
	GPUs         []struct {
		Index   int    `json:"index"`
		UUID    string `json:"uuid"`
		Address string `json:"address"`
		ModelID string `json:"modelId"`
	} `json:"gpus"`
}

// onlineNodes are the demo's nodes with status online.
func onlineNodes() ([]node, error) {
	b, err := demo.JSON(time.Now())
	if err != nil {
		return nil, err
	}
	var f struct {
		Nodes []node `json:"nodes"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	var out []node
	for _, n := range f.Nodes {
		if n.Status == "online" {
			out = append(out, n)
		}
	}
	return out, nil
}

// mockModel is the simulated DGX server for a node's GPU model. NVML
// knows no AMD GPU: an MI300X node runs on the simulated DGX H100, under
// its own GPUs' UUIDs (the server keeps a known GPU's model).
func mockModel(modelID string) string {
	switch {
	case strings.Contains(modelID, "a100"):
		return "dgxa100"
	case strings.Contains(modelID, "h200"):
		return "dgxh200"
	}
	return "dgxh100"
}

// simulate builds node n's simulated server with the demo's GPU identities.
func simulate(n node) (*sim.Server, error) {
	if len(n.GPUs) == 0 {
		return nil, fmt.Errorf("demo node %s has no GPUs", n.Name)
	}
	m, err := sim.NewServer(mockModel(n.GPUs[0].ModelID), n.Name)
	if err != nil {
		return nil, err
	}
	if len(n.GPUs) != len(m.Devices) {
		return nil, fmt.Errorf("demo node %s has %d GPUs, the simulated %s %d", n.Name, len(n.GPUs), m.Model, len(m.Devices))
	}
	for _, g := range n.GPUs {
		if err := m.SetIdentity(g.Index, g.UUID, g.Address); err != nil {
			return nil, fmt.Errorf("demo node %s: %w", n.Name, err)
		}
	}
	return m, nil
}

// Start enrolls the demo's online nodes in st and runs their agents against
// server (the base URL of this process's own listener) until ctx ends;
// wait blocks until they have stopped. Each start replaces the nodes'
// credentials, so one server process at a time runs the demo's agents.
func Start(ctx context.Context, st *store.Store, server string, o Options) (wait func(), err error) {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	if o.StartDelay <= 0 {
		o.StartDelay = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	nodes, err := onlineNodes()
	if err != nil {
		return nil, err
	}
	var cfgs []agent.Config
	ids := nodeid.New(st)
	for _, n := range nodes {
		m, err := simulate(n)
		if err != nil {
			return nil, err
		}
		e, err := ids.Enroll(ctx, enroller(), n.Name, n.ClusterID)
		if err != nil {
			return nil, fmt.Errorf("enrolling demo node %s: %w", n.Name, err)
		}
		log := slog.New(debug{o.Log.Handler()}).With("demoAgent", n.Name)
		cfgs = append(cfgs, agent.Config{
			Server: server, BootstrapToken: e.BootstrapToken, NodeName: n.Name, ClusterID: n.ClusterID,
			NVML: m, AgentVersion: n.AgentVersion, Interval: o.Interval,
			Runtime: &sim.Runtime{StartDelay: o.StartDelay, Log: log},
			Log:     log,
		})
	}
	var wg sync.WaitGroup
	for _, cfg := range cfgs {
		wg.Go(func() {
			if err := agent.Run(ctx, cfg); err != nil {
				cfg.Log.Error("in-process demo agent stopped", "err", err)
			}
		})
	}
	return wg.Wait, nil
}
