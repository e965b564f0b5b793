package qemu

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// maxSocketPath is the longest unix socket path Linux takes.
const maxSocketPath = 107

// commandLine is QEMU's arguments for s: a q35 machine under the chosen
// accelerator, s's vCPUs and memory, its disk on virtio, the serial
// console appended to a file, QMP on a socket, the cloud-init seed, a
// virtio NIC (network.go), one PCIe root port and
// vfio-pci device per passed-through function. gpus are the PCI
// addresses vfioDevices answered.
func (r *Runtime) commandLine(s Spec, img Image, dir, disk, seed string, port int, gpus []string) ([]string, error) {
	sock := filepath.Join(dir, "qmp.sock")
	if len(sock) > maxSocketPath {
		return nil, fmt.Errorf("the QMP socket path %s is longer than a unix socket allows (%d bytes); give the agent a shorter state directory", sock, maxSocketPath)
	}
	cpus := max(s.CPUs, 1)
	mem := max(s.MemoryGb, 1) * r.cfg.MiBPerGb
	args := []string{
		"-name", "guest=" + s.ID + ",debug-threads=on",
		"-machine", "q35",
		"-accel", r.accel,
	}
	if r.accel == AccelKVM {
		args = append(args, "-cpu", "host")
	}
	args = append(args,
		"-smp", strconv.Itoa(cpus),
		"-m", strconv.Itoa(mem),
		"-nodefaults", "-no-user-config", "-display", "none",
		// A guest's poweroff leaves QEMU paused in status shutdown, so the
		// runtime (or the next agent) reads it and quits it.
		"-action", "shutdown=pause",
		"-chardev", "file,id=console,path="+filepath.Join(dir, "console.log")+",append=on",
		"-serial", "chardev:console",
		"-qmp", "unix:"+sock+",server=on,wait=off",
		"-pidfile", filepath.Join(dir, "qemu.pid"),
		"-drive", "file="+disk+",if=none,id=disk0,format=qcow2",
		"-device", "virtio-blk-pci,drive=disk0,id=vda",
	)
	args = append(args, seedArgs(seed)...)
	args = append(args, r.netArgs(s, port)...)
	if img.Kernel != "" {
		args = append(args, "-kernel", img.Kernel)
		if img.Initrd != "" {
			args = append(args, "-initrd", img.Initrd)
		}
		cmdline := img.Cmdline
		if !strings.Contains(cmdline, "console=") {
			cmdline = strings.TrimSpace("console=ttyS0 " + cmdline)
		}
		args = append(args, "-append", cmdline)
	}
	for i, addr := range gpus {
		port := "gpu" + strconv.Itoa(i)
		args = append(args,
			"-device", fmt.Sprintf("pcie-root-port,id=%s,chassis=%d", port, i+1),
			"-device", fmt.Sprintf("vfio-pci,host=%s,bus=%s", addr, port))
	}
	return args, nil
}
