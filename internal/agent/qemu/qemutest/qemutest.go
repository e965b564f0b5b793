// Package qemutest builds the tiny guest the QEMU runtime's tests boot:
// Debian's cloud kernel, unpacked from its .deb (apt-get download, dpkg
// -x: nothing is installed), and an initramfs of busybox-static whose
// init loads the kernel's virtio modules, mounts the VM's disk (making a
// file system on a fresh one), counts its boots in a marker file on it,
// prints them on the serial console, prints the cloud-init seed it finds
// (the disk labelled cidata), answers a banner on port 22 of its NIC
// (user-mode networking's address), powers off when the ACPI power
// button is pressed, and powers off by itself when the kernel command
// line says gpugraph.poweroff (gpugraph.poweroff=N: N seconds after it
// is ready).
//
// The kernel and initramfs are kept in a cache outside the repository:
// $GPUGRAPH_QEMU_GUEST_DIR, else the user cache directory
// (~/.cache/gpugraph-qemu-guest); install.sh fills it. Without QEMU, apt,
// busybox-static or the kernel package, a test skips, unless
// GPUGRAPH_REQUIRE_QEMU=1 makes that a failure (CI sets it).
package qemutest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// RequireEnv, set to 1, turns a missing QEMU or guest into a failure.
const RequireEnv = "GPUGRAPH_REQUIRE_QEMU"

// DirEnv names the cache directory instead of the user cache directory.
const DirEnv = "GPUGRAPH_QEMU_GUEST_DIR"

// KernelPackage is the Debian package whose dependency is the kernel.
const KernelPackage = "linux-image-cloud-amd64"

// Lines the guest prints on its serial console.
const (
	ReadyLine   = "gpugraph-guest: ready"
	BootsPrefix = "gpugraph-guest: boots-before="
	// PowerOffCmdline makes the guest power off by itself a second after
	// it is ready; PowerOffCmdline+"=N" after N seconds (long enough for
	// an agent's heartbeats to report it running first).
	PowerOffCmdline = "gpugraph.poweroff"
	// SeedPrefix starts the line naming the device labelled cidata (the
	// cloud-init seed); SeedFilePrefix + "meta-data: " or "user-data: "
	// starts each line of those files, as the guest read them.
	SeedPrefix     = "gpugraph-guest: seed "
	SeedFilePrefix = "gpugraph-guest: "
	// Banner is what the guest answers on its port 22 (user-mode
	// networking's address 10.0.2.15), once a connection: a stand-in for
	// sshd's first line.
	Banner = "SSH-2.0-gpugraph-guest"
)

// Modules the init loads, in this order: the cloud kernel's virtio
// drivers are modules (ext4 is built in), and the ACPI power button
// needs button and evdev.
// virtio_net needs failover and net_failover; the cloud-init seed (a FAT
// disk) needs fat, vfat and their code pages.
var Modules = []string{"virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci", "virtio_blk", "button", "evdev",
	"failover", "net_failover", "virtio_net", "fat", "vfat", "nls_cp437", "nls_ascii"}

// Guest is a kernel and an initramfs to boot directly.
type Guest struct {
	Kernel, Initrd string
}

const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# The kernel's own console messages (a clock calibrated seconds into the
# boot) would land in the middle of this script's lines, which the tests
# read whole: only emergencies reach the console from here on.
echo 1 > /proc/sys/kernel/printk
for m in %s; do
	insmod /lib/modules/$m.ko || echo "gpugraph-guest: insmod $m failed"
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
if ! mount -t ext4 /dev/vda /mnt 2>/dev/null; then
	echo "gpugraph-guest: a fresh disk; making its file system"
	mke2fs -q -N 128 /dev/vda && mount -t ext4 /dev/vda /mnt || echo "gpugraph-guest: no disk"
fi
n=$(cat /mnt/boots 2>/dev/null | wc -l)
echo "gpugraph-guest: boots-before=$n"
echo boot >> /mnt/boots
sync
off() { echo "gpugraph-guest: $1"; sync; umount /mnt; poweroff -f; }
for e in /sys/class/input/event*; do
	if grep -q "Power Button" $e/device/name 2>/dev/null; then
		(dd if=/dev/input/${e##*/} of=/dev/null bs=24 count=1 2>/dev/null; off "power button") &
	fi
done
seed=$(findfs LABEL=cidata 2>/dev/null)
if [ -n "$seed" ]; then
	echo "gpugraph-guest: seed $seed"
	mkdir -p /seed
	if mount -t vfat -o ro "$seed" /seed; then
		for f in meta-data user-data; do sed "s/^/gpugraph-guest: $f: /" /seed/$f; done
		umount /seed
	fi
fi
if ip link set eth0 up 2>/dev/null; then
	ip addr add 10.0.2.15/24 dev eth0
	ip route add default via 10.0.2.2
	(while true; do echo "SSH-2.0-gpugraph-guest" | nc -l -p 22; done) &
fi
echo "gpugraph-guest: ready"
if grep -q gpugraph.poweroff /proc/cmdline; then
	d=$(sed -n 's/.*gpugraph[.]poweroff=\([0-9][0-9]*\).*/\1/p' /proc/cmdline)
	sleep ${d:-1}
	off "powering off by itself"
fi
while true; do sleep 3600; done
`

// Skip skips t, or fails it when RequireEnv is set, naming what is missing.
func Skip(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s; %s=1 requires it", what, RequireEnv)
	}
	t.Skipf("skipped: %s (Debian: apt-get install qemu-system-x86 qemu-utils busybox-static, then sh internal/agent/qemu/qemutest/install.sh; %s=1 makes this a failure)", what, RequireEnv)
}

// Binary answers qemu-system-x86_64, or skips t.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		Skip(t, "qemu-system-x86_64 is not installed")
	}
	if _, err := exec.LookPath("qemu-img"); err != nil {
		Skip(t, "qemu-img is not installed")
	}
	return bin
}

// Dir answers the cache directory.
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "gpugraph-qemu-guest"), nil
}

// Build answers the guest, built into the cache when absent, or skips t.
func Build(t testing.TB) Guest {
	t.Helper()
	g, err := Ensure()
	if err != nil {
		Skip(t, "the test guest cannot be had: "+err.Error())
	}
	return g
}

// Ensure fetches the kernel and builds the initramfs when the cache lacks
// them (install.sh calls it through the test binary's -run of nothing;
// see install.sh), and answers them.
func Ensure() (Guest, error) {
	dir, err := Dir()
	if err != nil {
		return Guest{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Guest{}, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return Guest{}, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return Guest{}, err
	}
	root := filepath.Join(dir, "kernel")
	kernels, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(kernels) == 0 {
		if err := fetchKernel(dir, root); err != nil {
			return Guest{}, err
		}
		kernels, _ = filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
		if len(kernels) == 0 {
			return Guest{}, fmt.Errorf("the %s package holds no boot/vmlinuz-*", KernelPackage)
		}
	}
	kernel := kernels[len(kernels)-1]
	version := strings.TrimPrefix(filepath.Base(kernel), "vmlinuz-")
	busybox, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return Guest{}, fmt.Errorf("busybox-static: %w", err)
	}
	script := fmt.Sprintf(initScript, strings.Join(Modules, " "))
	mods := map[string][]byte{}
	for _, m := range Modules {
		found, _ := filepath.Glob(filepath.Join(root, "lib", "modules", version, "kernel", "*", "*", m+".ko"))
		if len(found) == 0 {
			found, _ = filepath.Glob(filepath.Join(root, "lib", "modules", version, "kernel", "*", "*", "*", m+".ko"))
		}
		if len(found) == 0 {
			return Guest{}, fmt.Errorf("module %s.ko is not in the kernel package (compressed modules are not handled)", m)
		}
		if mods[m], err = os.ReadFile(found[0]); err != nil {
			return Guest{}, err
		}
	}
	h := sha256.New()
	h.Write([]byte(script))
	h.Write([]byte(version))
	h.Write(busybox)
	initrd := filepath.Join(dir, "initrd-"+hex.EncodeToString(h.Sum(nil))[:12]+".cpio")
	if _, err := os.Stat(initrd); err != nil {
		var c cpio
		for _, d := range []string{"bin", "dev", "proc", "sys", "mnt", "lib", "lib/modules"} {
			c.dir(d)
		}
		c.charDev("dev/console", 5, 1)
		c.file("bin/busybox", 0o755, busybox)
		c.file("init", 0o755, []byte(script))
		for _, m := range Modules {
			c.file("lib/modules/"+m+".ko", 0o644, mods[m])
		}
		tmp := initrd + ".new"
		if err := os.WriteFile(tmp, c.close(), 0o644); err != nil {
			return Guest{}, err
		}
		if err := os.Rename(tmp, initrd); err != nil {
			return Guest{}, err
		}
	}
	return Guest{Kernel: kernel, Initrd: initrd}, nil
}

// fetchKernel downloads the versioned kernel package KernelPackage
// depends on and unpacks it into root.
func fetchKernel(dir, root string) error {
	out, err := exec.Command("apt-cache", "depends", KernelPackage).CombinedOutput()
	if err != nil {
		return fmt.Errorf("apt-cache depends %s: %v: %s", KernelPackage, err, bytes.TrimSpace(out))
	}
	var pkg string
	for _, l := range strings.Split(string(out), "\n") {
		if d, ok := strings.CutPrefix(strings.TrimSpace(l), "Depends: "); ok && strings.HasPrefix(d, "linux-image-") {
			pkg = d
			break
		}
	}
	if pkg == "" {
		return fmt.Errorf("%s depends on no linux-image-* package", KernelPackage)
	}
	debs := filepath.Join(dir, "debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return err
	}
	cmd := exec.Command("apt-get", "download", "-q", pkg)
	cmd.Dir = debs
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get download %s: %v: %s", pkg, err, bytes.TrimSpace(out))
	}
	found, _ := filepath.Glob(filepath.Join(debs, pkg+"_*.deb"))
	if len(found) == 0 {
		return fmt.Errorf("apt-get download %s left no .deb", pkg)
	}
	tmp := root + ".new"
	os.RemoveAll(tmp)
	if out, err := exec.Command("dpkg", "-x", found[len(found)-1], tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg -x: %v: %s", err, bytes.TrimSpace(out))
	}
	os.RemoveAll(root)
	if err := os.Rename(tmp, root); err != nil {
		return err
	}
	return os.RemoveAll(debs) // unpacked, the package is not needed again

}

// cpio writes the newc archive format the kernel unpacks an initramfs
// from (uncompressed, which it takes as well).
type cpio struct {
	buf bytes.Buffer
	ino int
}

func (c *cpio) entry(name string, mode, rmaj, rmin int, data []byte) {
	c.ino++
	fmt.Fprintf(&c.buf, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rmaj, rmin, len(name)+1, 0)
	c.buf.WriteString(name)
	c.buf.WriteByte(0)
	c.pad()
	c.buf.Write(data)
	c.pad()
}

func (c *cpio) pad() {
	for c.buf.Len()%4 != 0 {
		c.buf.WriteByte(0)
	}
}

func (c *cpio) dir(name string)                         { c.entry(name, 0o040755, 0, 0, nil) }
func (c *cpio) file(name string, perm int, data []byte) { c.entry(name, 0o100000|perm, 0, 0, data) }
func (c *cpio) charDev(name string, major, minor int)   { c.entry(name, 0o020600, major, minor, nil) }
func (c *cpio) close() []byte                           { c.entry("TRAILER!!!", 0, 0, 0, nil); return c.buf.Bytes() }
