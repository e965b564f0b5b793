package qemu

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gpugraph/internal/agent"
	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/qemu/qemutest"
	"gpugraph/internal/agent/supervise"
)

// fakeKernel plays the kernel's part behind a fake sysfs tree: each write
// goes to the file (through writeSysfs, so only attributes that are there
// take one) and is recorded, then a driver's unbind lets go of the
// function (unless the driver is stuck, or refuses), and drivers_probe
// binds an unbound function to the driver its driver_override names, else
// to its host driver.
type fakeKernel struct {
	root    string
	host    map[string]string // the driver that takes a function without an override
	stuck   map[string]bool   // drivers whose unbind returns but keeps the function
	refuse  map[string]error  // drivers whose unbind fails
	noVFIO  bool              // vfio-pci not loaded: drivers_probe binds nothing to it
	devices string

	mu     sync.Mutex // the VM's loop writes while a test reads
	writes []string
}

func newKernel(root string) *fakeKernel {
	return &fakeKernel{root: root, devices: filepath.Join(root, "bus", "pci", "devices"),
		host:  map[string]string{"0000:3b:00.0": "nvidia", "0000:3b:00.1": "snd_hda_intel", "0000:86:00.0": "nvidia", "0000:86:00.1": "snd_hda_intel"},
		stuck: map[string]bool{}, refuse: map[string]error{}}
}

func (k *fakeKernel) write(path, val string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	rel, _ := filepath.Rel(k.root, path)
	if d, ok := strings.CutPrefix(rel, "bus/pci/drivers/"); ok && strings.HasSuffix(d, "/unbind") {
		if err := k.refuse[strings.TrimSuffix(d, "/unbind")]; err != nil {
			k.writes = append(k.writes, rel+" "+strconv.Quote(val)+" refused")
			return err
		}
	}
	if err := writeSysfs(path, val); err != nil {
		return err
	}
	k.writes = append(k.writes, rel+" "+strconv.Quote(val))
	link := filepath.Join(k.devices, val, "driver")
	switch {
	case strings.HasSuffix(rel, "/unbind"):
		driver := filepath.Base(filepath.Dir(rel))
		if cur, err := os.Readlink(link); err == nil && filepath.Base(cur) == driver && !k.stuck[driver] {
			os.Remove(link)
		}
	case rel == "bus/pci/drivers_probe":
		if _, err := os.Readlink(link); err == nil {
			return nil // bound already
		}
		b, _ := os.ReadFile(filepath.Join(k.devices, val, "driver_override"))
		d := strings.TrimSpace(string(b))
		if d == "" {
			d = k.host[val]
		}
		if d == "" || d == vfioPCI && k.noVFIO {
			return nil
		}
		return os.Symlink("../../../../bus/pci/drivers/"+d, link)
	}
	return nil
}

func (k *fakeKernel) driver(fn string) string {
	l, err := os.Readlink(filepath.Join(k.devices, fn, "driver"))
	if err != nil {
		return ""
	}
	return filepath.Base(l)
}

// rebindRuntime is a runtime with VFIORebind on k's tree.
func rebindRuntime(t *testing.T, k *fakeKernel) *Runtime {
	r := &Runtime{cfg: Config{StateDir: t.TempDir(), GPUBusIDs: busIDs, SysfsRoot: k.root, VFIORebind: true, Log: slog.New(slog.DiscardHandler)},
		sysfsWrite: k.write}
	r.sup = supervise.New(supervise.Config[Spec]{Ctx: t.Context()})
	return r
}

func moves(fns ...string) []string {
	var out []string
	for _, fn := range fns {
		driver := map[string]string{"0000:3b:00.0": "nvidia", "0000:3b:00.1": "snd_hda_intel"}[fn]
		out = append(out, "bus/pci/devices/"+fn+`/driver_override "vfio-pci"`, "bus/pci/drivers/"+driver+`/unbind "`+fn+`"`, `bus/pci/drivers_probe "`+fn+`"`)
	}
	return out
}

func givesBack(fns ...string) []string {
	var out []string
	for _, fn := range fns {
		out = append(out, "bus/pci/devices/"+fn+`/driver_override "\n"`, `bus/pci/drivers/vfio-pci/unbind "`+fn+`"`, `bus/pci/drivers_probe "`+fn+`"`)
	}
	return out
}

var onNvidia = map[string]string{"0000:3a:00.0": "pcieport", "0000:3b:00.0": "nvidia", "0000:3b:00.1": "snd_hda_intel"}

// TestVFIORebind: with VFIORebind, each function of the GPU's group not
// on vfio-pci (the bridge left alone) is moved the kernel's way, in
// order: vfio-pci in its driver_override, its address to its driver's
// unbind, then to drivers_probe; given back in reverse order: the
// override cleared, unbound from vfio-pci, drivers_probe, so the host's
// drivers take them again. A function already on vfio-pci is not moved.
func TestVFIORebind(t *testing.T) {
	k := newKernel(fakeSysfs(t, onNvidia))
	r := rebindRuntime(t, k)
	gpus, move, err := r.vfioDevices([]string{gpuA})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0000:3b:00.0", "0000:3b:00.1"}; !slices.Equal(gpus, want) {
		t.Errorf("devices %q, want %q", gpus, want)
	}
	if want := []moved{{"0000:3b:00.0", "nvidia", gpuA}, {"0000:3b:00.1", "snd_hda_intel", gpuA}}; !slices.Equal(move, want) {
		t.Fatalf("to move %+v, want %+v", move, want)
	}
	if len(k.writes) != 0 {
		t.Fatalf("vfioDevices wrote %q; it only reads", k.writes)
	}
	if err := r.rebind("vm-1", move); err != nil {
		t.Fatal(err)
	}
	if want := moves("0000:3b:00.0", "0000:3b:00.1"); !slices.Equal(k.writes, want) {
		t.Errorf("writes\n got %q\nwant %q", k.writes, want)
	}
	for _, fn := range []string{"0000:3b:00.0", "0000:3b:00.1"} {
		if d := k.driver(fn); d != vfioPCI {
			t.Errorf("%s bound to %q after the rebind, want vfio-pci", fn, d)
		}
		if b, _ := os.ReadFile(filepath.Join(k.devices, fn, "driver_override")); string(b) != "vfio-pci" {
			t.Errorf("%s driver_override %q", fn, b)
		}
	}
	if d := k.driver("0000:3a:00.0"); d != "pcieport" {
		t.Errorf("the bridge is bound to %q, want pcieport", d)
	}
	if _, again, err := r.vfioDevices([]string{gpuA}); err != nil || again != nil {
		t.Errorf("once on vfio-pci: to move %+v, %v; want none", again, err)
	}

	k.writes = nil
	r.giveBack("vm-1", move)
	if want := givesBack("0000:3b:00.1", "0000:3b:00.0"); !slices.Equal(k.writes, want) {
		t.Errorf("give-back writes\n got %q\nwant %q", k.writes, want)
	}
	for fn, want := range map[string]string{"0000:3b:00.0": "nvidia", "0000:3b:00.1": "snd_hda_intel"} {
		if d := k.driver(fn); d != want {
			t.Errorf("%s bound to %q after the give-back, want %s", fn, d, want)
		}
		if b, _ := os.ReadFile(filepath.Join(k.devices, fn, "driver_override")); string(b) != "\n" {
			t.Errorf("%s driver_override %q, want cleared", fn, b)
		}
	}
}

// TestVFIORebindRefusals: a driver that keeps its function, one whose
// unbind fails, and a vfio-pci that takes nothing each refuse the start
// with a reason naming the function; what was moved before is given
// back (in reverse order), and a function never moved is left alone.
func TestVFIORebindRefusals(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(*fakeKernel)
		want   string
		writes []string
		after  map[string]string
	}{
		{"nvidia keeps it", func(k *fakeKernel) { k.stuck["nvidia"] = true },
			"moving a GPU's function to vfio-pci: 0000:3b:00.0: nvidia will not let go of it: still bound to nvidia after its unbind",
			append(moves("0000:3b:00.0")[:2], `bus/pci/devices/0000:3b:00.0/driver_override "\n"`, `bus/pci/drivers_probe "0000:3b:00.0"`),
			map[string]string{"0000:3b:00.0": "nvidia", "0000:3b:00.1": "snd_hda_intel"}},
		{"the audio driver refuses", func(k *fakeKernel) { k.refuse["snd_hda_intel"] = syscall.EBUSY },
			"moving a GPU's function to vfio-pci: 0000:3b:00.1: snd_hda_intel will not let go of it: device or resource busy",
			slices.Concat(moves("0000:3b:00.0"), []string{`bus/pci/devices/0000:3b:00.1/driver_override "vfio-pci"`, `bus/pci/drivers/snd_hda_intel/unbind "0000:3b:00.1" refused`,
				`bus/pci/devices/0000:3b:00.1/driver_override "\n"`, `bus/pci/drivers_probe "0000:3b:00.1"`}, givesBack("0000:3b:00.0")),
			map[string]string{"0000:3b:00.0": "nvidia", "0000:3b:00.1": "snd_hda_intel"}},
		{"vfio-pci not loaded", func(k *fakeKernel) { k.noVFIO = true },
			"moving a GPU's function to vfio-pci: 0000:3b:00.0: vfio-pci did not take it (now no driver): is the vfio-pci module loaded?",
			append(moves("0000:3b:00.0"), `bus/pci/devices/0000:3b:00.0/driver_override "\n"`, `bus/pci/drivers_probe "0000:3b:00.0"`),
			map[string]string{"0000:3b:00.0": "nvidia", "0000:3b:00.1": "snd_hda_intel"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKernel(fakeSysfs(t, onNvidia))
			c.setup(k)
			r := rebindRuntime(t, k)
			_, move, err := r.vfioDevices([]string{gpuA})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.rebind("vm-1", move); err == nil || err.Error() != c.want {
				t.Errorf("error %v\nwant %s", err, c.want)
			}
			if !slices.Equal(k.writes, c.writes) {
				t.Errorf("writes\n got %q\nwant %q", k.writes, c.writes)
			}
			for fn, want := range c.after {
				if d := k.driver(fn); d != want {
					t.Errorf("%s bound to %q, want %s", fn, d, want)
				}
			}
		})
	}

	// Without VFIORebind nothing is written: the refusal stays.
	k := newKernel(fakeSysfs(t, onNvidia))
	r := rebindRuntime(t, k)
	r.cfg.VFIORebind = false
	if _, _, err := r.vfioDevices([]string{gpuA}); err == nil || !strings.Contains(err.Error(), "is bound to nvidia, not vfio-pci; bind it to vfio-pci before a VM can have it") {
		t.Errorf("without the flag: %v", err)
	}
	if len(k.writes) != 0 {
		t.Errorf("without the flag: wrote %q", k.writes)
	}
}

// TestGiveBackRecordedOnly: what a VM's state records as moved is given
// back when its QEMU is gone, by a runtime that did not move it (an
// agent restart), and the record is dropped; a function whose GPU
// another VM holds now is left on vfio-pci.
func TestGiveBackRecordedOnly(t *testing.T) {
	k := newKernel(fakeSysfs(t, onNvidia))
	r := rebindRuntime(t, k)
	_, move, err := r.vfioDevices([]string{gpuA})
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.MkdirAll(r.vmDir("vm-1"), 0o700))
	(&vm{dir: r.vmDir("vm-1")}).writeState(vmState{Generation: 2, GPUs: []string{gpuA}, Moved: move})
	if err := r.rebind("vm-1", move); err != nil {
		t.Fatal(err)
	}

	// Another VM booted on the GPU while vm-1's record was left.
	next := rebindRuntime(t, k)
	next.cfg.StateDir = r.cfg.StateDir
	next.sup.Hold("vm-2", []string{gpuA})
	k.writes = nil
	next.gone("vm-1")
	if len(k.writes) != 0 || k.driver("0000:3b:00.0") != vfioPCI {
		t.Errorf("gave back a GPU vm-2 holds: %q", k.writes)
	}
	if st := (&vm{dir: r.vmDir("vm-1")}).readState(); st.Moved != nil || st.Generation != 2 {
		t.Errorf("vm-1's state after its give-back: %+v", st)
	}

	// Recorded again, with no other VM on it: given back.
	(&vm{dir: r.vmDir("vm-1")}).writeState(vmState{Generation: 2, GPUs: []string{gpuA}, Moved: move})
	next.sup.Release("vm-2")
	next.gone("vm-1")
	if want := givesBack("0000:3b:00.1", "0000:3b:00.0"); !slices.Equal(k.writes, want) {
		t.Errorf("give-back writes\n got %q\nwant %q", k.writes, want)
	}
	if d := k.driver("0000:3b:00.0"); d != "nvidia" {
		t.Errorf("bound to %q after the give-back, want nvidia", d)
	}
	k.writes = nil
	next.gone("vm-1")
	if len(k.writes) != 0 {
		t.Errorf("a second give-back wrote %q", k.writes)
	}
}

// TestRebindAtStart: with VFIORebind, a VM's start moves its GPU to
// vfio-pci and records it before QEMU runs; QEMU then fails here on the
// device (no GPU on this host), and the failed start gives both
// functions back to the host: moves, then give-backs, in that order.
func TestRebindAtStart(t *testing.T) {
	qemutest.Binary(t)
	dir := qemutest.StateDir(t)
	k := newKernel(fakeSysfs(t, onNvidia))
	rt, err := New(Config{StateDir: dir, Accel: AccelTCG, MiBPerGb: 64, GPUBusIDs: busIDs, SysfsRoot: k.root, VFIORebind: true,
		Images: map[string]Image{"img": {}}})
	if err != nil {
		t.Fatal(err)
	}
	rt.sysfsWrite = k.write
	t.Cleanup(rt.Close)
	rt.Apply([]Spec{{ID: "vm-1", Generation: 1, Action: ActionRun, Image: "img", GPUs: []string{gpuA}, DiskGb: 1}})
	w := wait(t, rt, "vm-1", 1, agentapi.StateFailed)
	if !strings.HasPrefix(w.Message, "QEMU did not start: exited with status 1: ") || !strings.Contains(w.Message, "0000:3b:00.0") {
		t.Errorf("message %q, want QEMU's failure naming the device", w.Message)
	}
	deadline := time.Now().Add(5 * time.Second)
	want := slices.Concat(moves("0000:3b:00.0", "0000:3b:00.1"), givesBack("0000:3b:00.1", "0000:3b:00.0"))
	for !slices.Equal(k.writesNow(), want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := k.writesNow(); !slices.Equal(got, want) {
		t.Errorf("writes\n got %q\nwant %q", got, want)
	}
	if st := (&vm{dir: rt.vmDir("vm-1")}).readState(); st.Moved != nil {
		t.Errorf("the record after the give-back: %+v", st.Moved)
	}
}

func (k *fakeKernel) writesNow() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.writes)
}

// TestPassedThroughGPUs: a GPU a VM's state names that is on vfio-pci is
// answered as recorded (NVML does not see it); one back on nvidia is not
// (NVML lists it); an NVIDIA GPU on vfio-pci no state names is logged by
// its address, not answered; its address is found from the record when
// NVML does not know it.
func TestPassedThroughGPUs(t *testing.T) {
	root := fakeSysfs(t, map[string]string{"0000:3b:00.0": "vfio-pci", "0000:3b:00.1": "vfio-pci", "0000:86:00.0": "nvidia", "0000:af:00.0": "vfio-pci"})
	var logs bytes.Buffer
	r := &Runtime{cfg: Config{StateDir: t.TempDir(), SysfsRoot: root, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		GPUBusIDs: func(string) (string, error) { return "", errors.New("no such GPU on this node") }}}
	a := agent.GPUIdentity{Index: 3, UUID: gpuA, Address: "0000:3B:00.0", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81920 << 20}
	b := agent.GPUIdentity{Index: 5, UUID: gpuB, Address: "0000:86:00.0", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81920 << 20}
	for id, ids := range map[string][]agent.GPUIdentity{"vm-1": {a}, "vm-2": {b}} {
		must(t, os.MkdirAll(r.vmDir(id), 0o700))
		(&vm{dir: r.vmDir(id)}).writeState(vmState{Generation: 1, Identities: ids})
	}
	if got := r.PassedThroughGPUs(); !slices.Equal(got, []agent.GPUIdentity{a}) {
		t.Errorf("passed through %+v, want %+v", got, a)
	}
	if l := logs.String(); strings.Count(l, "level=WARN") != 1 || !strings.Contains(l, "address=0000:af:00.0") {
		t.Errorf("log %q, want one warning naming 0000:af:00.0", l)
	}
	gpus, _, err := r.vfioDevices([]string{gpuA})
	if err != nil || !slices.Equal(gpus, []string{"0000:3b:00.0", "0000:3b:00.1"}) {
		t.Errorf("devices of a GPU NVML does not see: %q, %v", gpus, err)
	}
	if got := r.identities([]string{gpuA, "GPU-nope"}); !slices.Equal(got, []agent.GPUIdentity{a}) {
		t.Errorf("identities %+v, want the recorded one", got)
	}
	r.cfg.SimulatedGPUs = true
	if got := r.PassedThroughGPUs(); got != nil {
		t.Errorf("simulated GPUs: %+v, want none", got)
	}
}
