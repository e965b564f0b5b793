// Command agent is gpugraph's node agent. It runs on each GPU node, reads the
// GPUs through NVML and reports them to the gpugraph server:
//
//	agent --server URL --node-name NAME [--cluster-id ID]
//	      (--bootstrap-token TOKEN --credential-file FILE | --credential-file FILE | --token KEY)
//	      [--interval 10s] [--mock dgxa100|dgxh100|dgxh200]
//	      [--mock-xid INDEX:XID]... [--ignore-xids LIST]
//	      [--mock-start-delay 2s] [--mock-fail-start ID]... [--mock-exit ID]...
//	      [--runtime sim|containerd] [--containerd-address SOCK] [--volume-root DIR]
//	      [--containerd-runtime-binary PATH] [--default-image REF] [--container-log-dir DIR]
//	      [--runtime qemu] [--qemu-state-dir DIR] [--vm-images DIR] [--qemu-binary PATH]
//	      [--qemu-accel auto|kvm|tcg] [--qemu-require-kvm] [--qemu-stop-grace 60s]
//	      [--qemu-net user|bridge] [--qemu-forward-addr ADDR] [--qemu-endpoint-host HOST]
//	      [--qemu-bridge BRIDGE] [--qemu-vfio-rebind]
//
// --runtime chooses what runs the workloads the server assigns: sim (the
// default with --mock) simulates a container runtime (sim.Runtime, package
// internal/agent/sim); containerd runs pods in the node's containerd (package
// internal/agent/containerd); qemu runs VMs in QEMU (package internal/agent/qemu),
// and hands pods to containerd when --containerd-address is given too, or
// to the simulated runtime with --mock (agent.Dispatch).
// Without any the agent reports no workloads, and
// the server fails what stays deploying after its --provision-timeout.
//
// Node identity: an operator enrolls the node (POST /v1/admin/nodes/enroll)
// and hands it the one-time bootstrap token; the agent exchanges it at start
// for the node's credential and keeps that in --credential-file, so a
// restart needs no new token. --token, an API key with nodes.report, is the
// legacy way: only a server started with --node-credentials-required=false
// accepts it, and never for a node that has a credential; refused, the
// agent exits saying how to get a bootstrap token.
//
// The token may come from GPUGRAPH_TOKEN instead of --token, and the
// bootstrap token from GPUGRAPH_BOOTSTRAP_TOKEN, which keeps them out of
// the process list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpugraph/internal/agent"
	"gpugraph/internal/agent/qemu"
	"gpugraph/internal/agent/sim"
)

const prog = "gpugraph-agent"

// tokenEnv is read when --token is absent, bootstrapEnv when
// --bootstrap-token is.
const (
	tokenEnv     = "GPUGRAPH_TOKEN"
	bootstrapEnv = "GPUGRAPH_BOOTSTRAP_TOKEN"
)

type options struct {
	server, token, nodeName, clusterID  string
	interval                            time.Duration
	mock                                string
	metricsAddr                         string
	mockXIDs                            []sim.XID
	ignoreXIDs                          []uint64
	ignoreAllXIDs                       bool
	mockStartDelay, mockStopDelay       time.Duration
	mockFailStart, mockExit             []string
	bootstrapToken, credentialFile      string
	runtime, containerdAddress          string
	volumeRoot, runtimeBinary           string
	defaultImage, containerLogDir       string
	qemuStateDir, qemuBinary, qemuAccel string
	vmImages                            string
	qemuRequireKVM                      bool
	qemuVFIORebind                      bool
	qemuStopGrace                       time.Duration
	qemuNet, qemuBridge                 string
	qemuForwardAddr, qemuEndpointHost   string
	// podsInContainerd: --runtime qemu with --containerd-address given,
	// so pods go to containerd beside the VMs.
	podsInContainerd bool
}

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stderr))
}

func run(args []string, getenv func(string) string, stderr io.Writer) int {
	opts, err := parseFlags(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("node", opts.nodeName)

	cfg := agent.Config{
		Server: opts.server,
		Token:  opts.token,

		BootstrapToken: opts.bootstrapToken,
		CredentialFile: opts.credentialFile,
		NodeName:       opts.nodeName,
		ClusterID:      opts.clusterID,
		Interval:       opts.interval,
		MetricsAddr:    opts.metricsAddr,
		XIDs:           agent.NewXIDPolicy(opts.ignoreXIDs, opts.ignoreAllXIDs),
		Log:            log,
	}
	if opts.mock != "" {
		m, err := sim.NewServer(opts.mock, opts.nodeName)
		if err == nil {
			err = m.CheckIndexes(opts.mockXIDs)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 2
		}
		cfg.NVML, cfg.Host = m, agent.HostInfo(m.HostInfo())
		cfg.AfterHeartbeat = m.RaiseAfterFirstHeartbeat(opts.mockXIDs, log)
		if opts.runtime == "" || opts.runtime == "sim" {
			cfg.Runtime = simRuntime(opts, log)
		}
		log.Info("running on a simulated server", "mock", opts.mock)
	} else {
		cfg.NVML = nvml.New()
		if cfg.Host, err = agent.ReadHostInfo(); err != nil {
			log.Warn("host figures incomplete", "err", err)
		}
	}

	if opts.runtime == "containerd" {
		rt, err := newContainerdRuntime(opts, log)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
		defer rt.Close()
		cfg.Runtime = rt
		log.Info("running pods in containerd", "address", opts.containerdAddress, "volumeRoot", opts.volumeRoot)
	}

	if opts.runtime == "qemu" {
		// The simulator's GPUs are no PCI devices: its VMs boot without them.
		rt, err := newQEMURuntime(opts, agent.IdentityOf(cfg.NVML), opts.mock != "", log)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
		defer rt.Close()
		cfg.Runtime = rt
		log.Info("running VMs in QEMU", "stateDir", opts.qemuStateDir, "accel", rt.Accel(), "net", opts.qemuNet)
		switch {
		case opts.podsInContainerd:
			pods, err := newContainerdRuntime(opts, log)
			if err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", prog, err)
				return 1
			}
			defer pods.Close()
			cfg.Runtime = agent.Dispatch{VMs: rt, Pods: pods}
			log.Info("running pods in containerd", "address", opts.containerdAddress, "volumeRoot", opts.volumeRoot)
		case opts.mock != "":
			cfg.Runtime = agent.Dispatch{VMs: rt, Pods: simRuntime(opts, log)}
			log.Info("simulating pods")
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log.Info("starting", "version", agent.Version, "server", opts.server, "interval", cfg.Interval)
	err = agent.Run(ctx, cfg)
	var nvmlErr *agent.NVMLInitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &nvmlErr):
		fmt.Fprintf(stderr, "%s: %v; use --mock dgxh100 to run on a simulated server\n", prog, err)
	default:
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	}
	return 1
}

// simRuntime is the simulated runtime of --mock.
func simRuntime(o options, log *slog.Logger) *sim.Runtime {
	return &sim.Runtime{StartDelay: o.mockStartDelay, StopDelay: o.mockStopDelay, FailStart: o.mockFailStart,
		Exit: o.mockExit, Log: log}
}

// appendID adds a workload id given to flag, which must be one word.
func appendID(ids *[]string, flag, s string) error {
	if s == "" || strings.ContainsAny(s, " \t\n") {
		return fmt.Errorf("%s %q: want a VM or pod id", flag, s)
	}
	*ids = append(*ids, s)
	return nil
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.server, "server", "", "gpugraph server base URL (required)")
	fs.StringVar(&o.token, "token", "", "legacy: API key with the nodes.report permission, accepted only by a server started with --node-credentials-required=false (default $"+tokenEnv+")")
	fs.StringVar(&o.bootstrapToken, "bootstrap-token", "", "one-time token from the node's enrollment, exchanged at start for its credential (default $"+bootstrapEnv+")")
	fs.StringVar(&o.credentialFile, "credential-file", "", "file that keeps the node credential (written on the exchange, read at later starts)")
	fs.StringVar(&o.nodeName, "node-name", "", "name this node reports under (required)")
	fs.StringVar(&o.clusterID, "cluster-id", "", "cluster the node belongs to")
	fs.DurationVar(&o.interval, "interval", agent.DefaultInterval, "heartbeat interval")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics of the GPUs in DCGM exporter's names on this address (e.g. :9400)")
	fs.StringVar(&o.mock, "mock", "", "run on a simulated server instead of NVML: "+strings.Join(sim.Models, "|"))
	fs.Func("mock-xid", "with --mock, raise XID on GPU INDEX after the first heartbeat (INDEX:XID, repeatable)", func(s string) error {
		x, err := sim.ParseXID(s)
		if err == nil {
			o.mockXIDs = append(o.mockXIDs, x)
		}
		return err
	})
	fs.Func("ignore-xids", "comma-separated XIDs that leave a GPU healthy, on top of 13,31,43,45,68,109; \"all\" disables XID checks", func(s string) error {
		x, all, err := agent.ParseXIDList(s)
		if err == nil {
			o.ignoreXIDs = append(o.ignoreXIDs, x...)
			o.ignoreAllXIDs = o.ignoreAllXIDs || all
		}
		return err
	})
	fs.DurationVar(&o.mockStartDelay, "mock-start-delay", 2*time.Second,
		"with --mock, how long an assigned workload is starting before it runs")
	fs.DurationVar(&o.mockStopDelay, "mock-stop-delay", time.Second,
		"with --mock, how long a workload told stop takes to tear down before it is reported gone")
	fs.Func("mock-fail-start", "with --mock, workload ID fails to start, every time it is deployed (repeatable)", func(s string) error {
		return appendID(&o.mockFailStart, "--mock-fail-start", s)
	})
	fs.Func("mock-exit", "with --mock, workload ID exits by itself once, after it ran (repeatable)", func(s string) error {
		return appendID(&o.mockExit, "--mock-exit", s)
	})
	fs.StringVar(&o.runtime, "runtime", "", "what runs assigned workloads: sim (the default with --mock), containerd (pods in the node's containerd) or qemu (VMs in QEMU)")
	fs.StringVar(&o.containerdAddress, "containerd-address", "/run/containerd/containerd.sock", "with --runtime containerd, containerd's socket")
	fs.StringVar(&o.volumeRoot, "volume-root", "/var/lib/gpugraph/volumes", "with --runtime containerd, the folder that holds one directory per volume id, mounted at /workspace")
	fs.StringVar(&o.runtimeBinary, "containerd-runtime-binary", "", "with --runtime containerd, the OCI runtime the runc shim calls instead of runc (nvidia-container-runtime on a GPU node)")
	fs.StringVar(&o.defaultImage, "default-image", "", "with --runtime containerd, the image of an assignment that names none (an older server's)")
	fs.StringVar(&o.containerLogDir, "container-log-dir", "", "with --runtime containerd, write each container's output to DIR/ID.log")
	fs.StringVar(&o.qemuStateDir, "qemu-state-dir", "/var/lib/gpugraph/qemu", "with --runtime qemu, the folder of each VM's QMP socket, pid file and console, and of the disks (keep it short: a socket path is at most 107 bytes)")
	fs.StringVar(&o.vmImages, "vm-images", "", "with --runtime qemu, the VM image catalog: DIR/NAME.qcow2 a base image, DIR/NAME/vmlinuz (initrd, cmdline, ready-line) a direct boot")
	fs.StringVar(&o.qemuBinary, "qemu-binary", qemu.DefaultBinary, "with --runtime qemu, the QEMU system emulator")
	fs.StringVar(&o.qemuAccel, "qemu-accel", "auto", "with --runtime qemu, auto (KVM when a probe runs a vCPU on /dev/kvm, else TCG), kvm or tcg")
	fs.BoolVar(&o.qemuRequireKVM, "qemu-require-kvm", false, "with --runtime qemu, refuse to run VMs under TCG (software emulation)")
	fs.DurationVar(&o.qemuStopGrace, "qemu-stop-grace", qemu.DefaultStopGrace, "with --runtime qemu, how long a stop waits for the guest to power off after the ACPI power button before QEMU is told to quit")
	fs.StringVar(&o.qemuNet, "qemu-net", qemu.NetUser, "with --runtime qemu, the VMs' network: user (QEMU's user-mode networking, each VM's SSH port forwarded from a free host port, its endpoint) or bridge (a tap in --qemu-bridge)")
	fs.StringVar(&o.qemuForwardAddr, "qemu-forward-addr", "0.0.0.0", "with --qemu-net user, the host address the VMs' forwarded SSH ports listen on")
	fs.StringVar(&o.qemuEndpointHost, "qemu-endpoint-host", "", "with --qemu-net user, the host name a VM's endpoint names (default: --qemu-forward-addr when it is one address, else the host's name)")
	fs.BoolVar(&o.qemuVFIORebind, "qemu-vfio-rebind", false, "with --runtime qemu, move each VM's GPU (its whole IOMMU group, bridges left out) from its driver (nvidia) to vfio-pci at the VM's start and give it back when the VM is gone; without it a GPU not bound to vfio-pci is refused")
	fs.StringVar(&o.qemuBridge, "qemu-bridge", "", "with --qemu-net bridge, the host bridge the VMs' taps join (QEMU's bridge helper must allow it)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "containerd-address" && o.runtime == "qemu" {
			o.podsInContainerd = true
		}
	})
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if o.token == "" {
		o.token = getenv(tokenEnv)
	}
	if o.bootstrapToken == "" {
		o.bootstrapToken = getenv(bootstrapEnv)
	}
	switch {
	case o.server == "":
		return o, errors.New("--server is required")
	case !strings.HasPrefix(o.server, "http://") && !strings.HasPrefix(o.server, "https://"):
		return o, fmt.Errorf("--server %q: want an http:// or https:// URL", o.server)
	case o.token == "" && o.bootstrapToken == "" && o.credentialFile == "":
		return o, errors.New("--bootstrap-token with --credential-file, --credential-file, or --token (or " + tokenEnv + ") is required")
	case o.nodeName == "":
		return o, errors.New("--node-name is required")
	case o.interval <= 0:
		return o, fmt.Errorf("--interval %v: must be positive", o.interval)
	case len(o.mockXIDs) > 0 && o.mock == "":
		return o, errors.New("--mock-xid needs --mock")
	case (len(o.mockFailStart) > 0 || len(o.mockExit) > 0) && o.mock == "":
		return o, errors.New("--mock-fail-start and --mock-exit need --mock")
	case o.runtime != "" && o.runtime != "sim" && o.runtime != "containerd" && o.runtime != "qemu":
		return o, fmt.Errorf("--runtime %q: want sim, containerd or qemu", o.runtime)
	case o.runtime == "sim" && o.mock == "":
		return o, errors.New("--runtime sim needs --mock")
	case o.runtime == "containerd" && o.volumeRoot == "":
		return o, errors.New("--runtime containerd needs --volume-root")
	case o.runtime == "qemu" && o.qemuStateDir == "":
		return o, errors.New("--runtime qemu needs --qemu-state-dir")
	case o.qemuAccel != "auto" && o.qemuAccel != qemu.AccelKVM && o.qemuAccel != qemu.AccelTCG:
		return o, fmt.Errorf("--qemu-accel %q: want auto, kvm or tcg", o.qemuAccel)
	case o.qemuRequireKVM && o.qemuAccel == qemu.AccelTCG:
		return o, errors.New("--qemu-require-kvm refuses --qemu-accel tcg")
	case o.qemuNet != qemu.NetUser && o.qemuNet != qemu.NetBridge:
		return o, fmt.Errorf("--qemu-net %q: want user or bridge", o.qemuNet)
	case o.qemuNet == qemu.NetBridge && o.qemuBridge == "":
		return o, errors.New("--qemu-net bridge needs --qemu-bridge")
	case o.qemuStopGrace <= 0:
		return o, fmt.Errorf("--qemu-stop-grace %v: must be positive", o.qemuStopGrace)
	case o.mockStartDelay < 0:
		return o, fmt.Errorf("--mock-start-delay %v: must not be negative", o.mockStartDelay)
	case o.mockStopDelay < 0:
		return o, fmt.Errorf("--mock-stop-delay %v: must not be negative", o.mockStopDelay)
	}
	return o, nil
}

// newQEMURuntime makes the QEMU runtime of o; busIDs finds a GPU's PCI
// address by its UUID; simulated says the GPUs are the simulator's
// (--mock), which are passed through to no VM.
func newQEMURuntime(o options, gpus func(string) (agent.GPUIdentity, error), simulated bool, log *slog.Logger) (*qemu.Runtime, error) {
	images := map[string]qemu.Image{}
	if o.vmImages != "" {
		var err error
		if images, err = qemu.LoadCatalog(o.vmImages); err != nil {
			return nil, fmt.Errorf("--vm-images: %w", err)
		}
	}
	accel := o.qemuAccel
	if accel == "auto" {
		accel = qemu.AccelAuto
	}
	return qemu.New(qemu.Config{StateDir: o.qemuStateDir, Binary: o.qemuBinary, Images: images, Accel: accel,
		RequireKVM: o.qemuRequireKVM, StopGrace: o.qemuStopGrace, GPUBusIDs: agent.BusIDs(gpus), GPUInfo: gpus,
		VFIORebind: o.qemuVFIORebind, SimulatedGPUs: simulated, Net: o.qemuNet, Bridge: o.qemuBridge,
		ForwardAddr: o.qemuForwardAddr, EndpointHost: o.qemuEndpointHost, Log: log})
}
