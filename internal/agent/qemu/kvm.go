package qemu

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// KVM's ioctls (linux/kvm.h) the probe needs.
const (
	kvmGetAPIVersion       = 0xAE00
	kvmCreateVM            = 0xAE01
	kvmGetVCPUMmapSize     = 0xAE04
	kvmCreateVCPU          = 0xAE41
	kvmSetUserMemoryRegion = 0x4020AE46
	kvmSetTSSAddr          = 0xAE47
	kvmRun                 = 0xAE80
	kvmExitHLT             = 5
)

// kvmProbeWait bounds the probe's one instruction: where nested
// virtualization is broken, /dev/kvm opens and a vCPU is made, but
// running it hangs, which is exactly what the probe is for.
const kvmProbeWait = 3 * time.Second

// ProbeKVM tells whether KVM works on this host: it opens dev (/dev/kvm),
// makes a VM with one vCPU and 64 KiB of memory holding a HLT at the reset
// vector, runs it and expects the HLT exit. A /dev/kvm that exists but
// cannot run a guest (nested virtualization not usable) answers an error,
// so the runtime falls back to TCG (or refuses, with RequireKVM). A hung
// probe leaves its thread blocked in the kernel; it runs once per agent.
func ProbeKVM(dev string) error {
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- runHLT(f) }()
	select {
	case err := <-done:
		f.Close()
		return err
	case <-time.After(kvmProbeWait):
		return fmt.Errorf("%s: a one-instruction guest did not halt within %v", dev, kvmProbeWait)
	}
}

func ioctl(fd uintptr, req, arg uintptr) (uintptr, error) {
	r, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, arg)
	if e != 0 {
		return r, e
	}
	return r, nil
}

func runHLT(f *os.File) error {
	kvm := f.Fd()
	v, err := ioctl(kvm, kvmGetAPIVersion, 0)
	if err != nil {
		return fmt.Errorf("KVM_GET_API_VERSION: %w", err)
	}
	if v != 12 {
		return fmt.Errorf("KVM API version %d, want 12", v)
	}
	vmfd, err := ioctl(kvm, kvmCreateVM, 0)
	if err != nil {
		return fmt.Errorf("KVM_CREATE_VM: %w", err)
	}
	defer syscall.Close(int(vmfd))
	const size = 0x10000
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_ANONYMOUS)
	if err != nil {
		return err
	}
	defer syscall.Munmap(mem)
	// After reset a vCPU fetches from CS base 0xFFFF0000 + IP 0xFFF0.
	mem[0xFFF0] = 0xF4 // hlt
	region := struct {
		slot, flags           uint32
		guestPhys, memorySize uint64
		userspaceAddr         uint64
	}{guestPhys: 0xFFFF0000, memorySize: size, userspaceAddr: uint64(uintptr(unsafe.Pointer(&mem[0])))}
	if _, err := ioctl(vmfd, kvmSetUserMemoryRegion, uintptr(unsafe.Pointer(&region))); err != nil {
		return fmt.Errorf("KVM_SET_USER_MEMORY_REGION: %w", err)
	}
	ioctl(vmfd, kvmSetTSSAddr, 0xFFFBD000) // Intel without unrestricted guests needs it; harmless elsewhere
	vcpu, err := ioctl(vmfd, kvmCreateVCPU, 0)
	if err != nil {
		return fmt.Errorf("KVM_CREATE_VCPU: %w", err)
	}
	defer syscall.Close(int(vcpu))
	runSize, err := ioctl(kvm, kvmGetVCPUMmapSize, 0)
	if err != nil {
		return fmt.Errorf("KVM_GET_VCPU_MMAP_SIZE: %w", err)
	}
	run, err := syscall.Mmap(int(vcpu), 0, int(runSize), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return err
	}
	defer syscall.Munmap(run)
	if _, err := ioctl(vcpu, kvmRun, 0); err != nil {
		return fmt.Errorf("KVM_RUN: %w", err)
	}
	// struct kvm_run: two u8 and six bytes of padding, then exit_reason.
	if reason := *(*uint32)(unsafe.Pointer(&run[8])); reason != kvmExitHLT {
		return fmt.Errorf("a one-instruction guest exited with reason %d, want HLT (%d)", reason, kvmExitHLT)
	}
	return nil
}

// errNoKVM is wrapped by Accelerator's answer when TCG is refused.
var errNoKVM = errors.New("KVM is not usable")
