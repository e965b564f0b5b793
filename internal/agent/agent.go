package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// DefaultInterval is the heartbeat period when Config.Interval is zero.
const DefaultInterval = 10 * time.Second

// Config is everything Run needs. Zero durations take the defaults.
type Config struct {
	Server    string // base URL of the gpugraph server
	Token     string // API key with nodes.report: legacy, accepted only by a server with --node-credentials-required=false (use BootstrapToken)
	NodeName  string
	ClusterID string
	// BootstrapToken, when set and CredentialFile holds no credential yet,
	// is exchanged at start for this node's credential (identity.go),
	// which is then the bearer token of every report.
	BootstrapToken string
	// CredentialFile keeps the node credential across restarts; "" keeps
	// it in memory only.
	CredentialFile string

	NVML nvml.Interface // nvml.New() on a GPU node, a *sim.Server (package internal/agent/sim) otherwise
	Host HostInfo       // CPU, RAM and disk figures for the inventory

	Interval time.Duration // heartbeat period; zero: DefaultInterval
	XIDs     XIDPolicy     // zero value: the plugin's defaults only
	Backoff  Backoff       // zero value: DefaultBackoffInitial, DefaultBackoffMax
	// EventWait bounds each NVML event wait, and so how long stopping can
	// take; zero: one second.
	EventWait  time.Duration
	HTTPClient *http.Client // zero: a client with a 15s timeout
	Log        *slog.Logger

	// Runtime runs the workloads the server assigns; nil runs none and
	// reports none (see Runtime).
	Runtime Runtime
	// AgentVersion is reported as agentVersion; "" is Version. The
	// in-process demo agents report each demo node's own version.
	AgentVersion string

	// AfterHeartbeat, when set, is called after the n-th heartbeat the
	// server accepted (n from 1). --mock-xid uses it to fail a simulated
	// GPU after the first one.
	AfterHeartbeat func(n int)

	// MetricsAddr, when set, serves Prometheus exposition of the GPUs in
	// DCGM exporter's names on it (exporter.go); Assignments labels each
	// GPU with what runs on it.
	MetricsAddr string
	Assignments Assignments
}

// NVMLInitError means NVML could not be initialised: on a node without the
// NVIDIA driver, libnvidia-ml cannot even be loaded.
type NVMLInitError struct {
	Ret nvml.Return
}

func (e *NVMLInitError) Error() string {
	if e.Ret == nvml.ERROR_LIBRARY_NOT_FOUND || e.Ret == nvml.ERROR_DRIVER_NOT_LOADED {
		return fmt.Sprintf("NVML could not be loaded (no NVIDIA driver on this host?): %v", e.Ret)
	}
	return fmt.Sprintf("NVML could not be initialised: %v", e.Ret)
}

func (c *Config) withDefaults() error {
	switch {
	case c.Server == "":
		return errors.New("no server URL")
	case c.Token == "" && c.BootstrapToken == "" && c.CredentialFile == "":
		return errors.New("no token, bootstrap token or credential file")
	case c.NodeName == "":
		return errors.New("no node name")
	case c.NVML == nil:
		return errors.New("no NVML interface")
	case c.Interval < 0:
		return errors.New("negative interval")
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.XIDs.ignored == nil {
		c.XIDs = NewXIDPolicy(nil, c.XIDs.ignoreAll)
	}
	if c.Backoff.Initial <= 0 {
		c.Backoff.Initial = DefaultBackoffInitial
	}
	if c.Backoff.Max <= 0 {
		c.Backoff.Max = DefaultBackoffMax
	}
	if c.EventWait <= 0 {
		c.EventWait = time.Second
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return nil
}

// Run discovers the GPUs, watches their health, sends the inventory and then
// heartbeats until ctx is done. It returns nil when stopped through ctx, an
// *AuthError when the server refuses the token, an *NVMLInitError when NVML
// cannot start.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.withDefaults(); err != nil {
		return fmt.Errorf("agent config: %w", err)
	}
	log := cfg.Log
	if ret := cfg.NVML.Init(); ret != nvml.SUCCESS {
		return &NVMLInitError{Ret: ret}
	}
	defer func() {
		if ret := cfg.NVML.Shutdown(); ret != nvml.SUCCESS {
			log.Warn("NVML shutdown", "err", ret)
		}
	}()

	gpus, err := Discover(cfg.NVML, log)
	if err != nil {
		return err
	}
	// The inventory is what NVML sees now plus the GPUs the runtime has
	// passed through to VMs (bound to vfio-pci, which NVML does not see).
	// It is fixed for the run: a GPU moved to vfio-pci later stays in it.
	gpus = withPassedThrough(gpus, cfg.Runtime, log)
	for _, g := range gpus {
		log.Info("GPU found", "index", g.Index, "uuid", g.UUID, "address", g.Address, "name", g.Name, "memoryBytes", g.MemoryBytes)
	}
	health := NewHealthState(gpus, log)
	book := &assignmentBook{}
	if cfg.Assignments == nil {
		cfg.Assignments = book.get
	}
	if cfg.MetricsAddr != "" {
		if err := serveMetrics(ctx, cfg.MetricsAddr, cfg.NodeName, gpus, health, cfg.Assignments, log); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
	}

	var wg sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer func() {
		stopWatch()
		wg.Wait() // the event set must be freed before NVML shuts down
	}()
	if cfg.XIDs.IgnoresAll() {
		log.Warn("XID health checks disabled")
	} else {
		log.Info("watching for critical XIDs", "ignored", cfg.XIDs.Ignored())
		w, err := NewXIDWatcher(cfg.NVML, gpus, health, cfg.XIDs, cfg.EventWait, log)
		if err != nil {
			// As the plugin does (internal/plugin/server.go), carry on
			// without XID checks rather than leave the node unreported.
			log.Error("XID health checks unavailable", "err", err)
		} else {
			wg.Go(func() { w.Run(watchCtx) })
		}
	}

	token, err := reportToken(ctx, cfg)
	if err != nil {
		return err
	}
	r := &reporter{cfg: cfg, log: log, client: NewClient(cfg.Server, token, cfg.HTTPClient), gpus: gpus, health: health, book: book}
	err = r.run(ctx)
	if ctx.Err() != nil && !isAuth(err) {
		log.Info("stopping")
		return nil
	}
	return err
}

func isAuth(err error) bool {
	var a *AuthError
	return errors.As(err, &a)
}
