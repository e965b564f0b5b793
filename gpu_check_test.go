package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakePCI lays out what sysfs shows of a node's PCI functions under root
// (bus/pci/devices/ADDR with vendor, class, driver and iommu_group, and
// kernel/iommu_groups/N/devices), as scripts/vfio-report.sh reads it.
// group "" is a function in no IOMMU group (the IOMMU off), driver "" one
// bound to none.
func fakePCI(t *testing.T, root string, fns []struct{ addr, vendor, class, driver, group string }) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range fns {
		dev := filepath.Join(root, "bus", "pci", "devices", f.addr)
		must(os.MkdirAll(dev, 0o755))
		must(os.WriteFile(filepath.Join(dev, "vendor"), []byte(f.vendor+"\n"), 0o644))
		must(os.WriteFile(filepath.Join(dev, "class"), []byte(f.class+"\n"), 0o644))
		if f.driver != "" {
			must(os.Symlink("../../../../bus/pci/drivers/"+f.driver, filepath.Join(dev, "driver")))
		}
		if f.group != "" {
			must(os.Symlink("../../../../kernel/iommu_groups/"+f.group, filepath.Join(dev, "iommu_group")))
			g := filepath.Join(root, "kernel", "iommu_groups", f.group, "devices")
			must(os.MkdirAll(g, 0o755))
			must(os.Symlink("../../../../bus/pci/devices/"+f.addr, filepath.Join(g, f.addr)))
		}
	}
}

// make gpu-check's VFIO readiness report, without a GPU: on a sysfs laid
// out by hand (SYSFS_ROOT), each NVIDIA GPU (not its audio function, not
// another vendor's display) is reported with its IOMMU group's functions
// and drivers, bridges left to the host: ready when every function is on
// vfio-pci, not ready when one is on nvidia or another driver, not ready
// in no group when the IOMMU is off; a count closes it. On this host (no
// nvidia-smi that finds a GPU) gpu-check prints the report first, then
// skips with a line and exits 0.
func TestGPUCheckVFIOReport(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	root := t.TempDir()
	fakePCI(t, root, []struct{ addr, vendor, class, driver, group string }{
		{"0000:00:02.0", "0x8086", "0x030000", "i915", "1"},           // another vendor's display: not a GPU of ours
		{"0000:3a:00.0", "0x10de", "0x060400", "pcieport", "7"},       // a bridge in the first GPU's group
		{"0000:3b:00.0", "0x10de", "0x030200", "vfio-pci", "7"},       // ready: every function on vfio-pci
		{"0000:3b:00.1", "0x10de", "0x040300", "vfio-pci", "7"},       // its audio function: not a GPU
		{"0000:86:00.0", "0x10de", "0x030200", "nvidia", "12"},        // still on nvidia
		{"0000:86:00.1", "0x10de", "0x040300", "snd_hda_intel", "12"}, // its audio on the host's driver
		{"0000:af:00.0", "0x10de", "0x030000", "nvidia", ""},          // the IOMMU off: in no group
	})
	run := func(script string, env ...string) string {
		t.Helper()
		cmd := exec.Command("sh", script)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sh %s: %v\n%s", script, err, out)
		}
		return string(out)
	}
	report := `vfio: 0000:3b:00.0: IOMMU group 7: 0000:3a:00.0=bridge(host) 0000:3b:00.0=vfio-pci 0000:3b:00.1=vfio-pci: ready
vfio: 0000:86:00.0: IOMMU group 12: 0000:86:00.0=nvidia 0000:86:00.1=snd_hda_intel: not ready (bind every function to vfio-pci, e.g. driverctl set-override ADDR vfio-pci)
vfio: 0000:af:00.0 (nvidia): in no IOMMU group: not ready (the IOMMU is off: intel_iommu=on or amd_iommu=on)
vfio: 1 of 3 NVIDIA GPUs ready for passthrough
`
	if got := run("scripts/vfio-report.sh", "SYSFS_ROOT="+root); got != report {
		t.Errorf("vfio-report.sh:\n%s\nwant:\n%s", got, report)
	}
	if got, want := run("scripts/vfio-report.sh", "SYSFS_ROOT="+t.TempDir()), "vfio: no NVIDIA GPU on the PCI bus\n"; got != want {
		t.Errorf("vfio-report.sh without a GPU: %q, want %q", got, want)
	}

	// gpu-check itself where nvidia-smi finds no GPU: one that fails
	// stands first on PATH, whatever this host has.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte("#!/bin/sh\necho 'No devices were found' >&2\nexit 6\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := run("scripts/gpu-check.sh", "SYSFS_ROOT="+root, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	want := "gpu-check: VFIO readiness (the QEMU runtime's passthrough; a report, never a failure)\n" + report +
		"gpu-check: skipped: nvidia-smi finds no GPU\n"
	if got != want {
		t.Errorf("gpu-check.sh without a GPU:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(readFile(t, "Makefile"), "gpu-check:\n\tsh scripts/gpu-check.sh\n") {
		t.Error("make gpu-check does not run scripts/gpu-check.sh")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
