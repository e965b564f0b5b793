package qemu

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/qemu/qemutest"
)

const (
	gpuA = "GPU-11111111-2222-3333-4444-555555555555"
	gpuB = "GPU-66666666-7777-8888-9999-000000000000"
)

// fakeSysfs lays out what Linux's sysfs shows of three NVIDIA GPUs: the
// first two each with its audio function in its IOMMU group, behind a
// bridge in the first group; the third (0000:af:00.0) alone in its group;
// drivers as given by PCI address. The attributes the rebind writes
// (driver_override, each driver's unbind, drivers_probe) are there,
// empty, as the kernel's are.
func fakeSysfs(t *testing.T, drivers map[string]string) string {
	t.Helper()
	root := t.TempDir()
	groups := map[string][]string{
		"7":  {"0000:3a:00.0", "0000:3b:00.0", "0000:3b:00.1"},
		"12": {"0000:86:00.0", "0000:86:00.1"},
		"20": {"0000:af:00.0"},
	}
	class := map[string]string{"0000:3a:00.0": "0x060400", "0000:3b:00.0": "0x030200", "0000:3b:00.1": "0x040300",
		"0000:86:00.0": "0x030200", "0000:86:00.1": "0x040300", "0000:af:00.0": "0x030200"}
	vendor := map[string]string{"0000:3a:00.0": "0x8086"}
	for _, d := range []string{"nvidia", "snd_hda_intel", "vfio-pci", "pcieport"} {
		must(t, os.MkdirAll(filepath.Join(root, "bus", "pci", "drivers", d), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "bus", "pci", "drivers", d, "unbind"), nil, 0o200))
	}
	must(t, os.WriteFile(filepath.Join(root, "bus", "pci", "drivers_probe"), nil, 0o200))
	for g, members := range groups {
		for _, m := range members {
			dev := filepath.Join(root, "bus", "pci", "devices", m)
			must(t, os.MkdirAll(dev, 0o755))
			must(t, os.WriteFile(filepath.Join(dev, "class"), []byte(class[m]+"\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(dev, "vendor"), []byte(cmp.Or(vendor[m], "0x10de")+"\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(dev, "driver_override"), []byte("(null)\n"), 0o644))
			must(t, os.Symlink("../../../../kernel/iommu_groups/"+g, filepath.Join(dev, "iommu_group")))
			if d := drivers[m]; d != "" {
				must(t, os.Symlink("../../../../bus/pci/drivers/"+d, filepath.Join(dev, "driver")))
			}
			gdir := filepath.Join(root, "kernel", "iommu_groups", g, "devices")
			must(t, os.MkdirAll(gdir, 0o755))
			must(t, os.Symlink("../../../../bus/pci/devices/"+m, filepath.Join(gdir, m)))
		}
	}
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// busIDs answers NVML's spelling of the two GPUs' addresses.
func busIDs(uuid string) (string, error) {
	switch uuid {
	case gpuA:
		return "00000000:3B:00.0", nil
	case gpuB:
		return "00000000:86:00.0", nil
	}
	return "", fmt.Errorf("no GPU %s on this node", uuid)
}

var allVFIO = map[string]string{"0000:3a:00.0": "pcieport", "0000:3b:00.0": "vfio-pci", "0000:3b:00.1": "vfio-pci",
	"0000:86:00.0": "vfio-pci", "0000:86:00.1": "vfio-pci"}

// TestCommandLine: vCPUs, memory (scaled), the disk, console and QMP, and
// each GPU's whole IOMMU group (bridges left out) as vfio-pci devices,
// each on a PCIe root port of its own.
func TestCommandLine(t *testing.T) {
	r := &Runtime{cfg: Config{MiBPerGb: 1024, GPUBusIDs: busIDs, SysfsRoot: fakeSysfs(t, allVFIO), Net: NetUser, ForwardAddr: "0.0.0.0"}, accel: AccelKVM}
	gpus, move, err := r.vfioDevices([]string{gpuA, gpuB})
	if err != nil || move != nil {
		t.Fatal(err, move)
	}
	if want := []string{"0000:3b:00.0", "0000:3b:00.1", "0000:86:00.0", "0000:86:00.1"}; !slices.Equal(gpus, want) {
		t.Fatalf("devices %q, want %q", gpus, want)
	}
	s := Spec{ID: "vm-1", CPUs: 8, MemoryGb: 64, DiskGb: 100}
	args, err := r.commandLine(s, Image{Kernel: "/k", Initrd: "/i", Cmdline: "quiet"}, "/st/vms/vm-1", "/st/disks/vol.qcow2", "/st/vms/vm-1/seed", 40022, gpus)
	if err != nil {
		t.Fatal(err)
	}
	want := "-name guest=vm-1,debug-threads=on -machine q35 -accel kvm -cpu host -smp 8 -m 65536 " +
		"-nodefaults -no-user-config -display none -action shutdown=pause " +
		"-chardev file,id=console,path=/st/vms/vm-1/console.log,append=on -serial chardev:console " +
		"-qmp unix:/st/vms/vm-1/qmp.sock,server=on,wait=off -pidfile /st/vms/vm-1/qemu.pid " +
		"-drive file=/st/disks/vol.qcow2,if=none,id=disk0,format=qcow2 -device virtio-blk-pci,drive=disk0,id=vda " +
		"-drive if=none,id=seed,driver=vvfat,dir=/st/vms/vm-1/seed,label=cidata,read-only=on -device virtio-blk-pci,drive=seed,id=vdb " +
		"-netdev user,id=net0,hostfwd=tcp:0.0.0.0:40022-:22 -device virtio-net-pci,netdev=net0,mac=" + macOf("vm-1") + " " +
		"-kernel /k -initrd /i -append console=ttyS0 quiet " +
		"-device pcie-root-port,id=gpu0,chassis=1 -device vfio-pci,host=0000:3b:00.0,bus=gpu0 " +
		"-device pcie-root-port,id=gpu1,chassis=2 -device vfio-pci,host=0000:3b:00.1,bus=gpu1 " +
		"-device pcie-root-port,id=gpu2,chassis=3 -device vfio-pci,host=0000:86:00.0,bus=gpu2 " +
		"-device pcie-root-port,id=gpu3,chassis=4 -device vfio-pci,host=0000:86:00.1,bus=gpu3"
	if got := strings.Join(args, " "); got != want {
		t.Errorf("command line\n got %s\nwant %s", got, want)
	}

	// Bridged: the NIC on a tap in the bridge, no port forwarded; the MAC
	// is the VM's own and the same at every boot.
	r.cfg.Net, r.cfg.Bridge = NetBridge, "br-vms"
	args, err = r.commandLine(s, Image{}, "/st/vms/vm-1", "/st/disks/vol.qcow2", "/st/vms/vm-1/seed", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(args, " "), "-netdev bridge,id=net0,br=br-vms -device virtio-net-pci,netdev=net0,mac="+macOf("vm-1"); !strings.HasSuffix(got, want) {
		t.Errorf("bridged command line\n got %s\nwant it to end %s", got, want)
	}
	if m := macOf("vm-1"); !regexp.MustCompile(`^52:54:00(:[0-9a-f]{2}){3}$`).MatchString(m) || m == macOf("vm-2") {
		t.Errorf("MACs %s (vm-1) and %s (vm-2): want QEMU's prefix, one per VM", m, macOf("vm-2"))
	}
	if p, err := r.forwardPort("vm-1", 0); p != 0 || err != nil {
		t.Errorf("bridged forward port %d, %v; want none", p, err)
	}
	if e := r.endpoint(0); e != "" {
		t.Errorf("bridged endpoint %q, want none", e)
	}
}

// TestVFIORefusals: a GPU (or a function of its group) bound to another
// driver, one with no IOMMU group, and one the agent cannot place are
// refused with a reason naming it.
func TestVFIORefusals(t *testing.T) {
	nvidia := map[string]string{"0000:3b:00.0": "nvidia", "0000:3b:00.1": "vfio-pci"}
	audio := map[string]string{"0000:86:00.0": "vfio-pci", "0000:86:00.1": "snd_hda_intel"}
	cases := []struct {
		name    string
		drivers map[string]string
		gpu     string
		busIDs  func(string) (string, error)
		want    string
	}{
		{"bound to nvidia", nvidia, gpuA, busIDs, "GPU " + gpuA + " (0000:3B:00.0): 0000:3b:00.0 in its IOMMU group is bound to nvidia, not vfio-pci; bind it to vfio-pci before a VM can have it"},
		{"its audio function", audio, gpuB, busIDs, "GPU " + gpuB + " (0000:86:00.0): 0000:86:00.1 in its IOMMU group is bound to snd_hda_intel, not vfio-pci; bind it to vfio-pci before a VM can have it"},
		{"no IOMMU", allVFIO, gpuA, func(string) (string, error) { return "0000:5e:00.0", nil }, "GPU " + gpuA + " (0000:5E:00.0) is in no IOMMU group: the host needs the IOMMU on (intel_iommu=on or amd_iommu=on) to pass it through"},
		{"unknown", allVFIO, "GPU-nope", busIDs, "GPU GPU-nope: no GPU GPU-nope on this node"},
		{"no addresses", allVFIO, gpuA, nil, "GPU " + gpuA + ": this agent does not know its GPUs' PCI addresses"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Runtime{cfg: Config{GPUBusIDs: c.busIDs, SysfsRoot: fakeSysfs(t, c.drivers)}}
			_, _, err := r.vfioDevices([]string{c.gpu})
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestGPUNeverInTwoVMs: a VM whose GPU another VM's QEMU still holds
// waits (starting, no stage) and starts only once that one is gone; here
// QEMU then fails on the missing device, which the report names. (No GPU
// on this host: the first VM's hold is recorded as its boot records it.)
func TestGPUNeverInTwoVMs(t *testing.T) {
	qemutest.Binary(t)
	dir := qemutest.StateDir(t)
	rt, err := New(Config{StateDir: dir, Accel: AccelTCG, MiBPerGb: 64, GPUBusIDs: busIDs, SysfsRoot: fakeSysfs(t, allVFIO),
		Images: map[string]Image{"img": {}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	rt.sup.Hold("vm-holder", []string{gpuA})
	rt.Apply([]Spec{{ID: "vm-b", Generation: 1, Action: ActionRun, Image: "img", GPUs: []string{gpuA}, DiskGb: 1}})
	time.Sleep(500 * time.Millisecond)
	rep := rt.Report()
	if len(rep) != 1 || rep[0].State != agentapi.StateStarting || rep[0].ProvisioningStage != "" {
		t.Fatalf("while the GPU is held: %+v, want vm-b starting with no stage", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, "vms", "vm-b")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("vm-b was set up while its GPU was held: %v", err)
	}
	rt.sup.Release("vm-holder")
	w := wait(t, rt, "vm-b", 1, agentapi.StateFailed)
	if !strings.HasPrefix(w.Message, "QEMU did not start: exited with status 1: ") || !strings.Contains(w.Message, "0000:3b:00.0") {
		t.Errorf("message %q, want QEMU's failure naming the device", w.Message)
	}
}

// TestUnknownImageAndPods: an image not in the catalog and a pod fail
// with a sentence saying why; TCG asked for with KVM required is refused.
func TestUnknownImageAndPods(t *testing.T) {
	qemutest.Binary(t)
	dir := t.TempDir()
	rt, err := New(Config{StateDir: dir, Accel: AccelTCG, Images: map[string]Image{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	rt.Assign([]agentapi.Assignment{
		{ID: "vm-x", Generation: 1, Kind: agentapi.KindVM, Image: "debian-13", Action: agentapi.ActionRun},
		{ID: "pod-x", Generation: 1, Kind: agentapi.KindPod, Image: "busybox", Action: agentapi.ActionRun},
	})
	if w := wait(t, rt, "vm-x", 1, agentapi.StateFailed); w.Message != `the VM image "debian-13" is not in this node's catalog.` {
		t.Errorf("vm-x: %q", w.Message)
	}
	if w := wait(t, rt, "pod-x", 1, agentapi.StateFailed); w.Message != "this node's runtime runs VMs only (QEMU); a pod needs a container runtime." {
		t.Errorf("pod-x: %q", w.Message)
	}
	if _, err := New(Config{StateDir: dir, Accel: AccelTCG, RequireKVM: true}); err == nil || !strings.Contains(err.Error(), "KVM is not usable: TCG was asked for and KVM is required") {
		t.Errorf("TCG with KVM required: %v", err)
	}
}

// TestFromAssignment: a reboot stays a reboot (in place), a recreate of a
// VM is read as one, the disk size falls back to the volume's.
func TestFromAssignment(t *testing.T) {
	s := FromAssignment(agentapi.Assignment{ID: "vm-1", Generation: 3, Kind: agentapi.KindVM, Image: "img", Action: agentapi.ActionRecreate,
		GPUs: []string{gpuA}, CPUCores: 4, RAMGb: 16, Volume: &agentapi.Volume{ID: "vol-1", SizeGb: 200, Fresh: true}})
	want := Spec{ID: "vm-1", Generation: 3, Action: ActionReboot, Image: "img", GPUs: []string{gpuA}, CPUs: 4, MemoryGb: 16, DiskGb: 200,
		Volume: Volume{ID: "vol-1", Fresh: true}}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if s := FromAssignment(agentapi.Assignment{ID: "vm-1", Generation: 1, Kind: agentapi.KindVM}); s.Action != ActionRun {
		t.Errorf("an older server's assignment: action %q, want run", s.Action)
	}
}

// TestStopOfAnEarlierAgentsVM: after an agent restart, a stop that names
// no GPUs (a preempted VM's) holds those the VM was booted with, read
// from its state file, so the preemptor's run waits for them.
func TestStopOfAnEarlierAgentsVM(t *testing.T) {
	dir := t.TempDir()
	r := &Runtime{cfg: Config{StateDir: dir}}
	must(t, os.MkdirAll(r.vmDir("vm-old"), 0o700))
	(&vm{dir: r.vmDir("vm-old")}).writeState(vmState{Generation: 4, GPUs: []string{gpuA, gpuB}})
	if got := r.bootedGPUs("vm-old"); !slices.Equal(got, []string{gpuA, gpuB}) {
		t.Errorf("booted with %q, want both GPUs", got)
	}
	if got := r.bootedGPUs("vm-none"); got != nil {
		t.Errorf("a VM with no state: %q, want none", got)
	}
	if got := r.bootedGPUs("../vm-old"); got != nil {
		t.Errorf("a malformed id: %q, want none", got)
	}
}
