package qemu

import (
	"errors"
	"log/slog"
	"os"
	"testing"
)

// TestChooseAccel: auto falls back to TCG where KVM cannot run a guest
// (here: no device), unless KVM is required; a forced choice is kept.
func TestChooseAccel(t *testing.T) {
	none := "/nonexistent/kvm"
	log := slog.New(slog.DiscardHandler)
	if a, err := chooseAccel(Config{KVMDevice: none, Log: log}); a != AccelTCG || err != nil {
		t.Errorf("auto without KVM: %q, %v; want tcg", a, err)
	}
	_, err := chooseAccel(Config{KVMDevice: none, RequireKVM: true, Log: log})
	if want := "KVM is not usable (open /nonexistent/kvm: no such file or directory) and KVM is required"; err == nil || err.Error() != want || !errors.Is(err, errNoKVM) {
		t.Errorf("auto without KVM, KVM required: %v, want %q", err, want)
	}
	if a, err := chooseAccel(Config{Accel: AccelKVM, KVMDevice: none, Log: log}); a != AccelKVM || err != nil {
		t.Errorf("kvm forced: %q, %v", a, err)
	}
	if _, err := chooseAccel(Config{Accel: "hvf", Log: log}); err == nil || err.Error() != `accelerator "hvf": want kvm, tcg or empty (probe)` {
		t.Errorf("hvf: %v", err)
	}
}

// TestProbeKVM: where /dev/kvm opens, the probe either runs its guest
// to the HLT or says why not; it never answers success for a device
// that is not KVM.
func TestProbeKVM(t *testing.T) {
	if err := ProbeKVM(os.DevNull); err == nil {
		t.Error("/dev/null passed the KVM probe")
	}
	if _, err := os.Stat("/dev/kvm"); err != nil {
		t.Skip("no /dev/kvm")
	}
	t.Logf("/dev/kvm: %v", ProbeKVM("/dev/kvm"))
}
