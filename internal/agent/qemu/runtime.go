// Package qemu runs a node's VMs in QEMU: one QEMU process per VM, its
// QMP socket, pid file and serial console under a directory of the
// agent's own, its disk a qcow2 per volume id kept on the node across
// reboot, stop/start and agent restarts. It implements agent.Runtime.
//
// A reboot is QMP system_reset of the same process; a stop is an ACPI
// system_powerdown, then quit after a grace, then a kill. QEMU runs with
// -action shutdown=pause, so a guest that powers itself off leaves its
// QEMU paused in status "shutdown" rather than gone: the runtime reports
// it exited (the server's vm_exited) and quits it, and an agent that was
// down meanwhile still reads what happened. A restarted agent adopts
// the QEMU it finds by its pid file and socket instead of starting a
// second one. Each VM's GPUs are passed through with vfio-pci, whole
// IOMMU groups, after their driver binding is checked (or, with
// VFIORebind, after the runtime moved them to vfio-pci, vfio.go); like the
// containerd runtime, a run waits until no other VM it tears down may
// hold one of its GPUs: both runtimes' workers, the following of the
// server's list and that rule are package supervise's.
package qemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gpugraph/internal/agent"
	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/supervise"
)

// Defaults of Config.
const (
	DefaultBinary    = "qemu-system-x86_64"
	DefaultStopGrace = 60 * time.Second
	DefaultMiBPerGb  = 1024
	// ConsoleTailBytes is how much of a VM's serial console ConsoleTail
	// answers.
	ConsoleTailBytes = 64 << 10
	// DefaultConsoleLimit: a console file past this size is rotated (its
	// last ConsoleTailBytes kept aside, the file emptied), while the VM
	// runs and before each boot.
	DefaultConsoleLimit = 1 << 20
	// consoleCheck is how often the running VMs' consoles are measured.
	consoleCheck = time.Second
	qmpWait      = 10 * time.Second
)

// Accelerators.
const (
	AccelAuto = ""    // KVM when ProbeKVM passes, else TCG
	AccelKVM  = "kvm" // hardware virtualization
	AccelTCG  = "tcg" // QEMU's software emulation: slow, for hosts without KVM
)

// Config is what New needs.
type Config struct {
	// StateDir holds vms/ID (QMP socket, pid file, console, QEMU's log,
	// state) and disks/VOLUME.qcow2. A unix socket path is at most 107
	// bytes, so it is best short (/var/lib/gpugraph/qemu).
	StateDir string
	// Binary is QEMU; "" is DefaultBinary on PATH. ImgBinary is qemu-img;
	// "" is qemu-img beside Binary, else on PATH.
	Binary, ImgBinary string
	// Images is the VM image catalog: an assignment's image names an entry.
	Images map[string]Image
	// Accel is AccelAuto, AccelKVM or AccelTCG; RequireKVM refuses TCG
	// (New fails when KVM is not usable), as a production node should.
	Accel      string
	RequireKVM bool
	// KVMDevice is probed for AccelAuto; "" is /dev/kvm.
	KVMDevice string
	// MiBPerGb is the guest memory per GiB of the assignment's ramGb; 0
	// is DefaultMiBPerGb. Tests scale VMs down with it.
	MiBPerGb int
	// StopGrace is how long a stop waits for the guest to power off after
	// the ACPI power button before QEMU is told to quit.
	StopGrace time.Duration
	// GPUBusIDs maps a GPU's UUID to its PCI address as NVML prints it
	// (normalized the way the agent reports it); SysfsRoot is where the
	// PCI devices and IOMMU groups are read ("" is /sys).
	GPUBusIDs func(uuid string) (string, error)
	SysfsRoot string
	// GPUInfo, when set, answers a GPU's identity (agent.IdentityOf):
	// kept in the state of each VM it is passed through to, so the agent
	// still reports it while it is bound to vfio-pci, which NVML does
	// not see (PassedThroughGPUs).
	GPUInfo func(uuid string) (agent.GPUIdentity, error)
	// VFIORebind lets the runtime move a VM's GPU functions that are
	// bound to another driver (nvidia) to vfio-pci at its start, and give
	// them back when the VM is gone (vfio.go). Without it such a GPU is
	// refused with a reason.
	VFIORebind bool
	// Net is NetUser ("" too) or NetBridge. With NetUser each VM's SSH
	// port is forwarded from a free port of ForwardAddr ("" is 0.0.0.0,
	// every address of the host), and its endpoint is
	// ssh://EndpointHost:PORT (EndpointHost "" is ForwardAddr when that
	// names one address, else the host's name). With NetBridge the NIC is
	// on a tap in Bridge, added by QEMU's bridge helper.
	Net, Bridge               string
	ForwardAddr, EndpointHost string
	// ConsoleLimit is the size past which a VM's console file is rotated;
	// 0 is DefaultConsoleLimit.
	ConsoleLimit int64
	// SimulatedGPUs: the node's GPUs are the agent's simulator's (--mock),
	// none of them a PCI device, so a VM boots without passthrough devices
	// (its GPUs are still held from its start until it is gone, as real
	// ones are). Never set on a real node.
	SimulatedGPUs bool
	Log           *slog.Logger
}

// Runtime runs VMs in QEMU; New makes one, Close stops its workers and
// leaves the VMs running for the next agent to adopt.
type Runtime struct {
	cfg Config
	// sysfsWrite, when set, writes sysfs attributes instead of
	// writeSysfs: tests play the kernel's part with it.
	sysfsWrite func(path, val string) error
	accel      string
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	// sup keeps the VMs, their workers and the GPUs each VM's QEMU may
	// hold, from its start until it is gone.
	sup *supervise.Supervisor[Spec]

	mu    sync.Mutex
	held  map[string]bool // volume ids used since New: never made anew as fresh
	ports map[string]int  // the host port forwarded to each VM's SSH, while the runtime knows it
}

type workload = supervise.Workload[Spec]

var volumeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// New checks cfg, chooses the accelerator and answers a Runtime.
func New(cfg Config) (*Runtime, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("qemu runtime: no state directory")
	}
	if cfg.Binary == "" {
		cfg.Binary = DefaultBinary
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("qemu runtime: %w", err)
	}
	cfg.Binary = bin
	if cfg.ImgBinary == "" {
		cfg.ImgBinary = filepath.Join(filepath.Dir(bin), "qemu-img")
		if _, err := os.Stat(cfg.ImgBinary); err != nil {
			cfg.ImgBinary = "qemu-img"
		}
	}
	if cfg.ImgBinary, err = exec.LookPath(cfg.ImgBinary); err != nil {
		return nil, fmt.Errorf("qemu runtime: %w", err)
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.MiBPerGb <= 0 {
		cfg.MiBPerGb = DefaultMiBPerGb
	}
	if cfg.KVMDevice == "" {
		cfg.KVMDevice = "/dev/kvm"
	}
	if cfg.SysfsRoot == "" {
		cfg.SysfsRoot = "/sys"
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ConsoleLimit <= 0 {
		cfg.ConsoleLimit = DefaultConsoleLimit
	}
	switch cfg.Net {
	case "", NetUser:
		cfg.Net = NetUser
		if cfg.ForwardAddr == "" {
			cfg.ForwardAddr = "0.0.0.0"
		}
		ip := net.ParseIP(cfg.ForwardAddr)
		if ip == nil {
			return nil, fmt.Errorf("qemu runtime: forward address %q is not an IP address", cfg.ForwardAddr)
		}
		if cfg.EndpointHost == "" && !ip.IsUnspecified() {
			cfg.EndpointHost = cfg.ForwardAddr
		}
		if cfg.EndpointHost == "" {
			if cfg.EndpointHost, err = os.Hostname(); err != nil {
				return nil, fmt.Errorf("qemu runtime: the host's name for VM endpoints: %w", err)
			}
		}
	case NetBridge:
		if cfg.Bridge == "" {
			return nil, errors.New("qemu runtime: bridged networking needs a bridge")
		}
	default:
		return nil, fmt.Errorf("qemu runtime: network %q: want %s or %s", cfg.Net, NetUser, NetBridge)
	}
	accel, err := chooseAccel(cfg)
	if err != nil {
		return nil, fmt.Errorf("qemu runtime: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "vms"), 0o700); err != nil {
		return nil, fmt.Errorf("qemu runtime: state directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "disks"), 0o700); err != nil {
		return nil, fmt.Errorf("qemu runtime: state directory: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runtime{cfg: cfg, accel: accel, ctx: ctx, cancel: cancel, held: map[string]bool{}, ports: map[string]int{}}
	r.sup = supervise.New(supervise.Config[Spec]{Ctx: ctx, Run: r.loop,
		Stop: func(id string, gen int) Spec { return Spec{ID: id, Generation: gen, Action: ActionStop} },
		// A VM this runtime did not start (an earlier agent did): it holds
		// the GPUs the stop names, or, for a preempted one whose stop names
		// none, those it was booted with. One with neither is taken to hold
		// none: its QEMU's own command line would say.
		Stranger: func(s Spec) supervise.Use {
			gpus := s.GPUs
			if len(gpus) == 0 {
				gpus = r.bootedGPUs(s.ID)
			}
			return supervise.Use{UUIDs: gpus}
		},
		Forget: func(id string) {
			r.mu.Lock()
			delete(r.ports, id)
			r.mu.Unlock()
		}})
	r.wg.Go(r.keepConsoles)
	return r, nil
}

func chooseAccel(cfg Config) (string, error) {
	switch cfg.Accel {
	case AccelKVM:
		return AccelKVM, nil
	case AccelTCG:
		if cfg.RequireKVM {
			return "", fmt.Errorf("%w: TCG was asked for and KVM is required", errNoKVM)
		}
		return AccelTCG, nil
	case AccelAuto:
		err := ProbeKVM(cfg.KVMDevice)
		if err == nil {
			return AccelKVM, nil
		}
		if cfg.RequireKVM {
			return "", fmt.Errorf("%w (%v) and KVM is required", errNoKVM, err)
		}
		cfg.Log.Warn("KVM is not usable; VMs run under TCG, software emulation", "err", err)
		return AccelTCG, nil
	}
	return "", fmt.Errorf("accelerator %q: want kvm, tcg or empty (probe)", cfg.Accel)
}

// Accel answers the accelerator the VMs run under: AccelKVM or AccelTCG.
func (r *Runtime) Accel() string { return r.accel }

// Close stops the workers; the VMs keep running.
func (r *Runtime) Close() {
	r.cancel()
	r.sup.Wait()
	r.wg.Wait()
}

// Assign implements agent.Runtime.
func (r *Runtime) Assign(as []agentapi.Assignment) { r.Apply(supervise.Specs(as, FromAssignment)) }

// Apply makes ss the set of VMs that should exist, as the containerd
// runtime's Apply does for pods: a new id or generation is acted on, an id
// not listed is stopped and forgotten after it was reported gone.
func (r *Runtime) Apply(ss []Spec) { r.sup.Apply(ss) }

// Report implements agent.Runtime.
func (r *Runtime) Report() []agentapi.WorkloadReport { return r.sup.Report() }

// The agent pushes what ConsoleTail answers to the server (GET /v1/vms/{id}/console).
var _ agent.ConsoleReader = (*Runtime)(nil)

// ConsoleTail answers the last ConsoleTailBytes of VM id's serial
// console (kept across its boots on this node, across a rotation too), or
// os.ErrNotExist.
func (r *Runtime) ConsoleTail(id string) ([]byte, error) {
	if !volumeID.MatchString(id) {
		return nil, os.ErrNotExist
	}
	dir := r.vmDir(id)
	cur, err := tail(filepath.Join(dir, "console.log"), ConsoleTailBytes)
	if err != nil {
		return nil, err
	}
	if len(cur) < ConsoleTailBytes {
		prev, _ := tail(filepath.Join(dir, "console.prev"), int64(ConsoleTailBytes-len(cur)))
		cur = append(prev, cur...)
	}
	return cur, nil
}

// keepConsoles rotates the console of each VM whose file passed
// ConsoleLimit, every consoleCheck, so a guest that writes its console
// without end between boots is bounded all the same.
func (r *Runtime) keepConsoles() {
	t := time.NewTicker(consoleCheck)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		dirs, _ := os.ReadDir(filepath.Join(r.cfg.StateDir, "vms"))
		for _, d := range dirs {
			rotateConsole(filepath.Join(r.cfg.StateDir, "vms", d.Name()), r.cfg.ConsoleLimit)
		}
	}
}

// rotateConsole keeps dir's console.log under limit: past it, its last
// ConsoleTailBytes go to console.prev and console.log is emptied. QEMU
// keeps appending (it opened the file O_APPEND), so its next line starts
// the emptied file; what it wrote between the copy and the truncation
// (microseconds) is lost, which a console that rotates tolerates.
func rotateConsole(dir string, limit int64) {
	path := filepath.Join(dir, "console.log")
	st, err := os.Stat(path)
	if err != nil || st.Size() <= limit {
		return
	}
	b, err := tail(path, ConsoleTailBytes)
	if err != nil {
		return
	}
	prev := filepath.Join(dir, "console.prev")
	if os.WriteFile(prev+".new", b, 0o600) != nil || os.Rename(prev+".new", prev) != nil {
		return
	}
	os.Truncate(path, 0)
}

func tail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	_, err = f.ReadAt(b, off)
	return b, err
}

func (r *Runtime) vmDir(id string) string { return filepath.Join(r.cfg.StateDir, "vms", id) }

// loop is the one goroutine that touches VM id's QEMU, so its steps
// never interleave.
func (r *Runtime) loop(id string, w *workload) {
	var cur Spec
	var have bool
	var v *vm
	var ready <-chan struct{}
	var stopReady context.CancelFunc = func() {}
	log := r.cfg.Log.With("vm", id)
	defer func() { stopReady() }()
	for {
		var s Spec
		var exitC, evC <-chan struct{}
		if v != nil {
			exitC, evC = v.exited, v.eventC()
		}
		select {
		case <-r.ctx.Done():
			if v != nil {
				v.detach()
			}
			return
		case s = <-w.Want():
		case <-ready:
			ready = nil
			log.Info("vm running", "generation", cur.Generation)
			w.Set(cur.Generation, agentapi.StateRunning, "", "")
			continue
		case <-evC:
			if v.guestOff() {
				// The guest powered itself off: QEMU waits paused in
				// status shutdown (-action shutdown=pause) until told.
				stopReady()
				ready = nil
				v.quit(r.cfg.StopGrace)
				log.Info("vm exited: the guest powered itself off", "generation", cur.Generation)
				w.Set(cur.Generation, agentapi.StateExited, ExitedMessage, "")
				v = nil
				r.gone(id)
			}
			continue
		case <-exitC:
			stopReady()
			ready = nil
			msg := v.exitMessage()
			log.Error("vm failed", "generation", cur.Generation, "message", msg)
			w.Set(cur.Generation, agentapi.StateFailed, msg, "")
			v = nil
			r.gone(id)
			continue
		}
		if have && supervise.Same(s, cur) {
			continue
		}
		cur, have = s, true
		stopReady()
		ready = nil
		if v == nil {
			// A QEMU an earlier agent left (or this one, before a failed
			// step) is adopted, never started twice.
			v = r.adopt(id, log)
		}
		if s.Action == ActionStop {
			if v != nil {
				v.powerdown(r.cfg.StopGrace, log)
				v = nil
			}
			var err error
			if s.Volume.Delete {
				err = r.deleteDisk(s)
			}
			r.giveBackRecorded(id) // its QEMU is gone, whether or not its disk went
			if r.sup.Stopped(id, w, s.Generation, "the runtime could not delete its disk: ", err, log) {
				return
			}
			continue
		}
		if s.Unsupported != "" {
			w.Set(s.Generation, agentapi.StateFailed, s.Unsupported, "")
			continue
		}
		img, ok := r.cfg.Images[s.Image]
		if !ok {
			w.Set(s.Generation, agentapi.StateFailed, fmt.Sprintf("the VM image %q is not in this node's catalog.", s.Image), "")
			continue
		}
		if v != nil {
			st := v.readState()
			switch {
			case v.guestOff():
				// Powered off while no agent watched: it ended by itself.
				v.quit(r.cfg.StopGrace)
				v = nil
				r.gone(id)
				w.Set(s.Generation, agentapi.StateExited, ExitedMessage, "")
				continue
			case s.Generation == st.Generation:
				// This very generation, adopted: running as it was.
				w.Set(s.Generation, agentapi.StateRunning, "", "")
				w.SetEndpoint(r.endpoint(st.SSHPort))
				r.sup.Hold(id, s.GPUs)
				continue
			case s.Action == ActionReboot:
				w.Set(s.Generation, agentapi.StateStarting, "", agentapi.StageBooting)
				w.SetEndpoint(r.endpoint(st.SSHPort))
				off := consoleSize(v.dir)
				if err := v.reset(); err != nil {
					log.Error("reboot", "generation", s.Generation, "err", err)
					w.Set(s.Generation, agentapi.StateFailed, "the reboot failed: "+err.Error(), "")
					continue
				}
				st.Generation = s.Generation
				v.writeState(st)
				log.Info("vm rebooted in place", "generation", s.Generation)
				ready, stopReady = r.watchReady(v.dir, off, img)
				continue
			default:
				// A new run of another generation: the old QEMU goes first.
				v.quit(r.cfg.StopGrace)
				v = nil
				r.gone(id)
			}
		}
		if !r.sup.Claim(id, s, w, log) {
			// The runtime closes, or another spec came while s waited
			// for its GPUs: the next read acts on what was pushed last,
			// s itself included.
			have = false
			continue
		}
		nv, off, err := r.boot(s, img, w)
		if err != nil {
			r.giveBackRecorded(id)
			r.sup.StartFailed(id, w, s.Generation, err, log)
			continue
		}
		v = nv
		log.Info("vm started", "generation", s.Generation, "accel", r.accel, "pid", v.pid)
		ready, stopReady = r.watchReady(v.dir, off, img)
	}
}

// ExitedMessage is the report's sentence for a guest that powered off.
const ExitedMessage = "the guest powered itself off."

// gone is called once VM id's QEMU is gone (exited, crashed, replaced):
// the functions the runtime moved to vfio-pci for it go back to the host,
// then its GPUs are free for the next VM, so that VM finds them where the
// host left them. A stop's and a failed start's do the same through
// supervise's Stopped and StartFailed, after giveBackRecorded.
func (r *Runtime) gone(id string) {
	r.giveBackRecorded(id)
	r.sup.Release(id)
}

// diskPath answers s's qcow2 under StateDir/disks.
func (r *Runtime) diskPath(s Spec) (string, string, error) {
	id := s.Volume.ID
	if id == "" {
		id = s.ID
	}
	if !volumeID.MatchString(id) {
		return "", "", fmt.Errorf("volume id %q is not a valid file name", id)
	}
	return id, filepath.Join(r.cfg.StateDir, "disks", id+".qcow2"), nil
}

// disk answers s's disk, made (sparse) when absent, and made anew when
// the volume is fresh and this runtime has not used it since it started.
func (r *Runtime) disk(s Spec, img Image) (string, error) {
	id, path, err := r.diskPath(s)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	held := r.held[id]
	r.held[id] = true
	r.mu.Unlock()
	if s.Volume.Fresh && !held {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("remove the fresh volume's old disk: %w", err)
		}
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	size := max(s.DiskGb, 1)
	args := []string{"create", "-q", "-f", "qcow2"}
	if img.Base != "" {
		args = append(args, "-F", "qcow2", "-b", img.Base)
	}
	tmp := path + ".new"
	args = append(args, tmp, strconv.Itoa(size)+"G")
	if out, err := exec.CommandContext(r.ctx, r.cfg.ImgBinary, args...).CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("qemu-img create: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return path, os.Rename(tmp, path)
}

func (r *Runtime) deleteDisk(s Spec) error {
	id, path, err := r.diskPath(s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.held, id)
	r.mu.Unlock()
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// vmState is what the runtime keeps beside a VM's QEMU: the generation
// its guest runs (a reboot moves it without a new process).
type vmState struct {
	Generation int `json:"generation"`
	// GPUs are the UUIDs it was booted with: what a stop that names none
	// (a preempted VM's) waits for, after an agent restart.
	GPUs []string `json:"gpus,omitempty"`
	// SSHPort is the host port forwarded to its SSH (user-mode
	// networking): its endpoint, kept for the next agent and tried first
	// at its next boot.
	SSHPort int `json:"sshPort,omitempty"`
	// Moved are the PCI functions the runtime moved to vfio-pci for it
	// (VFIORebind), recorded before they are moved: given back to the
	// host when its QEMU is gone, by this agent or the next.
	Moved []moved `json:"moved,omitempty"`
	// Identities are its GPUs as NVML last answered them: what the
	// inventory reports of them while they are bound to vfio-pci.
	Identities []agent.GPUIdentity `json:"gpuIdentities,omitempty"`
}

// bootedGPUs answers the GPUs VM id's QEMU was booted with, from its
// state file (none when it has none).
func (r *Runtime) bootedGPUs(id string) []string {
	if !volumeID.MatchString(id) {
		return nil
	}
	return (&vm{dir: r.vmDir(id)}).readState().GPUs
}

// boot starts generation s: its disk, its GPUs' devices, then QEMU. It
// answers the VM and the console's size before the boot.
func (r *Runtime) boot(s Spec, img Image, w *workload) (*vm, int64, error) {
	w.Set(s.Generation, agentapi.StateStarting, "", agentapi.StageCreatingVolume)
	disk, err := r.disk(s, img)
	if err != nil {
		return nil, 0, err
	}
	// What an earlier QEMU of this VM (gone while no agent watched) had
	// moved to vfio-pci goes back first, so the record is this boot's.
	r.giveBackRecorded(s.ID)
	var gpus []string
	var move []moved
	var ids []agent.GPUIdentity
	if !r.cfg.SimulatedGPUs {
		if gpus, move, err = r.vfioDevices(s.GPUs); err != nil {
			return nil, 0, err
		}
		ids = r.identities(s.GPUs)
	}
	w.Set(s.Generation, agentapi.StateStarting, "", agentapi.StageBooting)
	dir := r.vmDir(s.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, 0, err
	}
	before := (&vm{dir: dir}).readState()
	for _, f := range []string{"qmp.sock", "qemu.pid", "state.json"} {
		os.Remove(filepath.Join(dir, f))
	}
	if len(move) > 0 {
		// Recorded before they are moved: an agent that dies midway
		// still gives them back (a function never moved is left alone).
		(&vm{dir: dir}).writeState(vmState{GPUs: s.GPUs, Moved: move, Identities: ids})
		if err := r.rebind(s.ID, move); err != nil {
			(&vm{dir: dir}).writeState(vmState{GPUs: s.GPUs, Identities: ids})
			return nil, 0, err
		}
	}
	rotateConsole(dir, r.cfg.ConsoleLimit)
	off := consoleSize(dir)
	seed, err := writeSeed(dir, s)
	if err != nil {
		return nil, 0, fmt.Errorf("the cloud-init seed: %w", err)
	}
	port, err := r.forwardPort(s.ID, before.SSHPort)
	if err != nil {
		return nil, 0, err
	}
	args, err := r.commandLine(s, img, dir, disk, seed, port, gpus)
	if err != nil {
		return nil, 0, err
	}
	v, err := r.start(s.ID, dir, args)
	if err != nil {
		return nil, 0, err
	}
	v.writeState(vmState{Generation: s.Generation, GPUs: s.GPUs, SSHPort: port, Moved: move, Identities: ids})
	w.SetEndpoint(r.endpoint(port))
	return v, off, nil
}

func consoleSize(dir string) int64 {
	st, err := os.Stat(filepath.Join(dir, "console.log"))
	if err != nil {
		return 0
	}
	return st.Size()
}

// watchReady answers a channel closed once img's ready line appears in
// the console after off (at once when it names none), and its cancel.
func (r *Runtime) watchReady(dir string, off int64, img Image) (<-chan struct{}, context.CancelFunc) {
	c := make(chan struct{})
	if img.ReadyLine == "" {
		close(c)
		return c, func() {}
	}
	ctx, cancel := context.WithCancel(r.ctx)
	go func() {
		path := filepath.Join(dir, "console.log")
		var buf []byte
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if f, err := os.Open(path); err == nil {
				st, _ := f.Stat()
				if st != nil && st.Size() < off {
					off = 0 // rotated meanwhile (rotateConsole)
				}
				if st != nil && st.Size() > off {
					b := make([]byte, st.Size()-off)
					n, _ := f.ReadAt(b, off)
					off += int64(n)
					buf = append(buf, b[:n]...)
					if strings.Contains(string(buf), img.ReadyLine) {
						f.Close()
						close(c)
						return
					}
					if k := len(buf) - len(img.ReadyLine); k > 0 {
						buf = buf[k:]
					}
				}
				f.Close()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return c, cancel
}

// Processes. QEMU runs in its own session, so the agent's signals (a ^C,
// a service stop) do not reach it and it outlives the agent.

// vm is one QEMU process and its QMP connection.
type vm struct {
	id, dir string
	pid     int
	q       *qmp
	exited  chan struct{} // closed once the process is gone
	mu      sync.Mutex
	exitMsg string
	seen    int // QMP events read
	off     bool
}

func (v *vm) statePath() string { return filepath.Join(v.dir, "state.json") }

func (v *vm) readState() vmState {
	var st vmState
	if b, err := os.ReadFile(v.statePath()); err == nil {
		json.Unmarshal(b, &st)
	}
	return st
}

func (v *vm) writeState(st vmState) {
	b, _ := json.Marshal(st)
	tmp := v.statePath() + ".new"
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, v.statePath())
	}
}

func (v *vm) exitMessage() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.exitMsg
}

// eventC is closed when a QMP event comes that the loop has not read.
func (v *vm) eventC() <-chan struct{} {
	evs, c := v.q.eventsSince(v.seen)
	if len(evs) > 0 {
		done := make(chan struct{})
		close(done)
		return done
	}
	return c
}

// guestOff reads the events not yet read and tells whether the guest
// powered itself off (a SHUTDOWN the guest caused), or QEMU's status says
// it did while no one listened.
func (v *vm) guestOff() bool {
	evs, _ := v.q.eventsSince(v.seen)
	v.seen += len(evs)
	for _, e := range evs {
		if e.Name != "SHUTDOWN" {
			continue
		}
		var d struct {
			Guest bool `json:"guest"`
		}
		json.Unmarshal(e.Data, &d)
		if d.Guest {
			v.off = true
		}
	}
	if !v.off {
		if st, err := v.q.status(qmpWait); err == nil && st == "shutdown" {
			v.off = true
		}
	}
	return v.off
}

func (v *vm) reset() error {
	_, err := v.q.run("system_reset", nil, qmpWait)
	return err
}

// powerdown presses the ACPI power button, waits up to grace for the
// guest to power off, then quits QEMU (and kills it if that fails).
func (v *vm) powerdown(grace time.Duration, log *slog.Logger) {
	if _, err := v.q.run("system_powerdown", nil, qmpWait); err != nil {
		log.Warn("system_powerdown", "err", err)
	}
	deadline := time.After(grace)
	for !v.guestOff() {
		_, c := v.q.eventsSince(v.seen)
		select {
		case <-c:
			continue
		case <-v.exited:
		case <-deadline:
			log.Warn("the guest did not power off in its grace; QEMU is told to quit", "grace", grace)
		}
		break
	}
	v.quit(grace)
}

// quit tells QEMU to quit and waits for it to be gone, killing it after
// wait.
func (v *vm) quit(wait time.Duration) {
	select {
	case <-v.exited:
	default:
		v.q.run("quit", nil, qmpWait)
		select {
		case <-v.exited:
		case <-time.After(wait):
			syscall.Kill(v.pid, syscall.SIGKILL)
			<-v.exited
		}
	}
	v.q.Close()
}

// detach lets go of a VM the runtime leaves running (Close).
func (v *vm) detach() { v.q.Close() }

// start runs QEMU with args and connects to its QMP socket.
func (r *Runtime) start(id, dir string, args []string) (*vm, error) {
	logf, err := os.OpenFile(filepath.Join(dir, "qemu.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(r.cfg.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start QEMU: %w", err)
	}
	v := &vm{id: id, dir: dir, pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		v.mu.Lock()
		v.exitMsg = "QEMU " + describeExit(err) + lastLine(filepath.Join(dir, "qemu.log"))
		v.mu.Unlock()
		close(v.exited)
	}()
	sock := filepath.Join(dir, "qmp.sock")
	deadline := time.Now().Add(qmpWait)
	for {
		if q, err := dialQMP(sock, qmpWait); err == nil {
			v.q = q
			return v, nil
		} else if time.Now().After(deadline) {
			syscall.Kill(v.pid, syscall.SIGKILL)
			<-v.exited
			return nil, fmt.Errorf("QEMU's QMP socket: %w", err)
		}
		select {
		case <-v.exited:
			return nil, fmt.Errorf("QEMU did not start: %s", strings.TrimPrefix(v.exitMessage(), "QEMU "))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func describeExit(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exited with status 0"
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("was killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	default:
		return "was lost: " + err.Error()
	}
}

// lastLine answers ": " and the last line QEMU logged, or "." when none.
func lastLine(path string) string {
	b, err := tail(path, 4096)
	if err != nil {
		return "."
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return "."
}

// adopt answers the QEMU of VM id an earlier agent (or step) left
// running, found by its pid file and checked by its command line naming
// this VM's QMP socket (a reused pid is not adopted), or nil.
func (r *Runtime) adopt(id string, log *slog.Logger) *vm {
	dir := r.vmDir(id)
	b, err := os.ReadFile(filepath.Join(dir, "qemu.pid"))
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return nil
	}
	sock := filepath.Join(dir, "qmp.sock")
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), sock) {
		return nil
	}
	q, err := dialQMP(sock, qmpWait)
	if err != nil {
		log.Warn("a QEMU of this VM runs but its QMP socket does not answer; it is killed", "pid", pid, "err", err)
		syscall.Kill(pid, syscall.SIGKILL)
		return nil
	}
	v := &vm{id: id, dir: dir, pid: pid, q: q, exited: make(chan struct{})}
	go func() {
		// Not this process's child: it is gone when its socket closes and
		// the pid no longer names it.
		<-q.Done()
		for syscall.Kill(pid, 0) == nil {
			if c, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err != nil || !strings.Contains(string(c), sock) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		v.mu.Lock()
		v.exitMsg = "QEMU exited (started by an earlier agent, its status is unknown)" + lastLine(filepath.Join(dir, "qemu.log"))
		v.mu.Unlock()
		close(v.exited)
	}()
	log.Info("adopted a running QEMU", "pid", pid)
	return v
}
