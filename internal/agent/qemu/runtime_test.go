package qemu

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/qemu/qemutest"
)

// testMiBPerGb scales the guests down: a 1 GiB assignment gets 160 MiB.
const testMiBPerGb = 160

type fixture struct {
	t     *testing.T
	dir   string
	guest qemutest.Guest
	rt    *Runtime
}

func testConfig(dir string, g qemutest.Guest) Config {
	accel := os.Getenv("GPUGRAPH_QEMU_ACCEL") // "" probes; tcg where KVM runs a vCPU but hangs a kernel
	if accel == "auto" {
		accel = AccelAuto
	} else if accel == "" {
		accel = AccelTCG
	}
	return Config{StateDir: dir, Accel: accel, MiBPerGb: testMiBPerGb, StopGrace: 20 * time.Second, ForwardAddr: "127.0.0.1",
		Images: map[string]Image{
			"guest":          {Kernel: g.Kernel, Initrd: g.Initrd, Cmdline: "quiet", ReadyLine: qemutest.ReadyLine},
			"guest-poweroff": {Kernel: g.Kernel, Initrd: g.Initrd, Cmdline: "quiet " + qemutest.PowerOffCmdline, ReadyLine: qemutest.ReadyLine},
		}}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	qemutest.Binary(t)
	g := qemutest.Build(t)
	dir := qemutest.StateDir(t)
	f := &fixture{t: t, dir: dir, guest: g}
	f.rt = f.open()
	return f
}

// open makes a runtime on the fixture's state directory, closed at the
// test's end (a second one is an agent restarted).
func (f *fixture) open() *Runtime {
	f.t.Helper()
	rt, err := New(testConfig(f.dir, f.guest))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(rt.Close)
	return rt
}

func pidOf(path string) int {
	b, _ := os.ReadFile(path)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func cmdlineOf(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// qemus counts the live QEMU processes of the VM whose QMP socket is
// sock: those whose command line names its directory.
func qemus(sock string) int { return len(qemutest.Running(filepath.Dir(sock))) }

func wait(t *testing.T, rt *Runtime, id string, gen int, state string) agentapi.WorkloadReport {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	var last []agentapi.WorkloadReport
	for time.Now().Before(deadline) {
		last = rt.Report()
		for _, w := range last {
			if w.ID == id && w.Generation == gen && w.State == state {
				return w
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s generation %d never reported %s; last report %+v", id, gen, state, last)
	return agentapi.WorkloadReport{}
}

// lastBoots answers the boot count the guest printed last.
func lastBoots(t *testing.T, rt *Runtime, id string) string {
	t.Helper()
	b, err := rt.ConsoleTail(id)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b), qemutest.BootsPrefix)
	if i < 0 {
		t.Fatalf("the console has no %q line:\n%s", qemutest.BootsPrefix, b)
	}
	rest := string(b[i+len(qemutest.BootsPrefix):])
	n, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(n)
}

func vmSpec(gen int, action string) Spec {
	return Spec{ID: "vm-a", Generation: gen, Action: action, Image: "guest", CPUs: 1, MemoryGb: 1, DiskGb: 2,
		Volume: Volume{ID: "vol-a", Fresh: gen == 1}}
}

// TestVMLifecycle: a VM boots with the assignment's vCPUs, memory and a
// sparse qcow2 of its disk size; the guest counts its boots on that disk.
// A reboot is the same QEMU reset (the count kept); a stop powers it off
// through ACPI and keeps the disk, which the next start finds; a restarted
// agent adopts the running QEMU instead of starting a second; a fresh
// volume on an agent that never used it is a new disk.
func TestVMLifecycle(t *testing.T) {
	f := newFixture(t)
	rt := f.rt
	sock := filepath.Join(f.dir, "vms", "vm-a", "qmp.sock")

	rt.Apply([]Spec{vmSpec(1, ActionRun)})
	wait(t, rt, "vm-a", 1, agentapi.StateRunning)
	if got := lastBoots(t, rt, "vm-a"); got != "0" {
		t.Errorf("first boot: boots before %s, want 0", got)
	}
	pid := pidOf(filepath.Join(f.dir, "vms", "vm-a", "qemu.pid"))
	cmd := cmdlineOf(pid)
	for _, want := range []string{" -smp 1 ", " -m 160 ", " -accel " + rt.Accel() + " ", "-action shutdown=pause", "file=" + filepath.Join(f.dir, "disks", "vol-a.qcow2") + ",if=none"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("QEMU's command line lacks %q: %s", want, cmd)
		}
	}
	out, err := exec.Command("qemu-img", "info", "-U", "--output=json", filepath.Join(f.dir, "disks", "vol-a.qcow2")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		VirtualSize int64 `json:"virtual-size"`
		ActualSize  int64 `json:"actual-size"`
		Format      string
	}
	json.Unmarshal(out, &info)
	if info.VirtualSize != 2<<30 || info.Format != "qcow2" || info.ActualSize >= 64<<20 {
		t.Errorf("disk: %s, virtual size %d (want %d), %d bytes on the host (want a sparse few)", info.Format, info.VirtualSize, 2<<30, info.ActualSize)
	}

	// Reboot in place: the same process, the marker kept.
	rt.Apply([]Spec{vmSpec(2, ActionReboot)})
	wait(t, rt, "vm-a", 2, agentapi.StateRunning)
	if got := lastBoots(t, rt, "vm-a"); got != "1" {
		t.Errorf("after the reboot: boots before %s, want 1", got)
	}
	if p := pidOf(filepath.Join(f.dir, "vms", "vm-a", "qemu.pid")); p != pid || qemus(sock) != 1 {
		t.Errorf("after the reboot: pid %d (was %d), %d QEMUs; want the same one", p, pid, qemus(sock))
	}

	// Stop: ACPI power button, the guest powers off, QEMU is gone.
	stop := vmSpec(2, ActionStop)
	rt.Apply([]Spec{stop})
	wait(t, rt, "vm-a", 2, agentapi.StateGone)
	if n := qemus(sock); n != 0 {
		t.Fatalf("%d QEMUs after the stop, want 0", n)
	}
	if b, _ := rt.ConsoleTail("vm-a"); !strings.Contains(string(b), "gpugraph-guest: power button") {
		t.Errorf("the guest never saw the ACPI power button:\n%s", b)
	}
	// Start on the same disk.
	rt.Apply([]Spec{vmSpec(3, ActionRun)})
	wait(t, rt, "vm-a", 3, agentapi.StateRunning)
	if got := lastBoots(t, rt, "vm-a"); got != "2" {
		t.Errorf("after stop and start: boots before %s, want 2", got)
	}
	pid = pidOf(filepath.Join(f.dir, "vms", "vm-a", "qemu.pid"))

	// The agent restarts: the new runtime adopts the QEMU.
	rt.Close()
	rt2 := f.open()
	rt2.Apply([]Spec{vmSpec(3, ActionRun)})
	wait(t, rt2, "vm-a", 3, agentapi.StateRunning)
	if p := pidOf(filepath.Join(f.dir, "vms", "vm-a", "qemu.pid")); p != pid || qemus(sock) != 1 {
		t.Errorf("after the agent's restart: pid %d (was %d), %d QEMUs; want the same one", p, pid, qemus(sock))
	}
	// A reboot through the adopted QEMU.
	rt2.Apply([]Spec{vmSpec(4, ActionReboot)})
	wait(t, rt2, "vm-a", 4, agentapi.StateRunning)
	if got := lastBoots(t, rt2, "vm-a"); got != "3" {
		t.Errorf("after a reboot by the restarted agent: boots before %s, want 3", got)
	}
	rt2.Apply([]Spec{vmSpec(4, ActionStop)})
	wait(t, rt2, "vm-a", 4, agentapi.StateGone)

	// A fresh volume this agent never used is a new disk.
	fresh := vmSpec(5, ActionRun)
	fresh.Volume.Fresh = true
	rt2.Apply([]Spec{fresh})
	wait(t, rt2, "vm-a", 5, agentapi.StateRunning)
	if got := lastBoots(t, rt2, "vm-a"); got != "0" {
		t.Errorf("a fresh volume: boots before %s, want 0", got)
	}
	// Terminate: gone, and the disk deleted.
	end := vmSpec(5, ActionStop)
	end.Volume.Delete = true
	rt2.Apply([]Spec{end})
	wait(t, rt2, "vm-a", 5, agentapi.StateGone)
	if _, err := os.Stat(filepath.Join(f.dir, "disks", "vol-a.qcow2")); !os.IsNotExist(err) {
		t.Errorf("the terminated VM's disk: %v, want it deleted", err)
	}
}

// TestGuestEnds: a guest that powers itself off is reported exited (the
// server's vm_exited) and its QEMU is gone; a QEMU that dies is failed
// with how it ended. The two VMs run side by side.
func TestGuestEnds(t *testing.T) {
	f := newFixture(t)
	off := Spec{ID: "vm-off", Generation: 1, Action: ActionRun, Image: "guest-poweroff", CPUs: 1, MemoryGb: 1, DiskGb: 1}
	crash := Spec{ID: "vm-crash", Generation: 1, Action: ActionRun, Image: "guest", CPUs: 1, MemoryGb: 1, DiskGb: 1}
	f.rt.Apply([]Spec{off, crash})
	wait(t, f.rt, "vm-crash", 1, agentapi.StateRunning)
	syscall.Kill(pidOf(filepath.Join(f.dir, "vms", "vm-crash", "qemu.pid")), syscall.SIGKILL)
	if w := wait(t, f.rt, "vm-crash", 1, agentapi.StateFailed); w.Message != "QEMU was killed by signal 9 (killed)." {
		t.Errorf("vm-crash: message %q", w.Message)
	}
	w := wait(t, f.rt, "vm-off", 1, agentapi.StateExited)
	if w.Message != ExitedMessage {
		t.Errorf("vm-off: message %q, want %q", w.Message, ExitedMessage)
	}
	if n := qemus(filepath.Join(f.dir, "vms", "vm-off", "qmp.sock")); n != 0 {
		t.Errorf("%d QEMUs after the guest's poweroff, want 0", n)
	}
}

// TestGuestOffWhileAgentAway: a guest that powers itself off while no
// agent runs leaves its QEMU paused in status shutdown; the next agent
// adopts it, reports it exited and quits it.
func TestGuestOffWhileAgentAway(t *testing.T) {
	f := newFixture(t)
	s := Spec{ID: "vm-away", Generation: 1, Action: ActionRun, Image: "guest-poweroff", CPUs: 1, MemoryGb: 1, DiskGb: 1}
	f.rt.Apply([]Spec{s})
	wait(t, f.rt, "vm-away", 1, agentapi.StateStarting)
	sock := filepath.Join(f.dir, "vms", "vm-away", "qmp.sock")
	deadline := time.Now().Add(30 * time.Second)
	for qemus(sock) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	f.rt.Close() // the agent stops before the guest is up
	console := filepath.Join(f.dir, "vms", "vm-away", "console.log")
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(console); strings.Contains(string(b), "gpugraph-guest: powering off by itself") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // the poweroff itself
	if n := qemus(sock); n != 1 {
		t.Fatalf("%d QEMUs after the guest's poweroff with no agent, want 1 (paused)", n)
	}
	rt2 := f.open()
	rt2.Apply([]Spec{s})
	if w := wait(t, rt2, "vm-away", 1, agentapi.StateExited); w.Message != ExitedMessage {
		t.Errorf("message %q, want %q", w.Message, ExitedMessage)
	}
	deadline = time.Now().Add(10 * time.Second)
	for qemus(sock) != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := qemus(sock); n != 0 {
		t.Errorf("%d QEMUs once the next agent read the poweroff, want 0", n)
	}
}
