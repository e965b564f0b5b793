#!/bin/sh
# VFIO readiness of this machine's NVIDIA GPUs, for the QEMU runtime's
# passthrough (make gpu-check prints it): each GPU's PCI address, its
# driver, its IOMMU group and every function in it with its driver
# (bridges stay with the host), and whether the group is ready: every
# other function bound to vfio-pci. A report, never a failure: a node
# that runs pods keeps its GPUs on nvidia. SYSFS_ROOT replaces /sys.
set -eu
devs="${SYSFS_ROOT:-/sys}/bus/pci/devices"
driver() { if [ -L "$1/driver" ]; then basename "$(readlink "$1/driver")"; else echo "no driver"; fi; }
found=0
ready=0
for d in "$devs"/*; do
	[ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] || continue
	case "$(cat "$d/class" 2>/dev/null)" in 0x0300* | 0x0302*) ;; *) continue ;; esac
	found=$((found + 1))
	addr=${d##*/}
	if [ ! -e "$d/iommu_group" ]; then
		echo "vfio: $addr ($(driver "$d")): in no IOMMU group: not ready (the IOMMU is off: intel_iommu=on or amd_iommu=on)"
		continue
	fi
	group=$(basename "$(readlink "$d/iommu_group")")
	members=
	ok=yes
	for m in "$d/iommu_group/devices"/*; do
		case "$(cat "$m/class" 2>/dev/null)" in 0x0604*) members="$members ${m##*/}=bridge(host)"; continue ;; esac
		drv=$(driver "$m")
		members="$members ${m##*/}=$drv"
		[ "$drv" = vfio-pci ] || ok=no
	done
	if [ $ok = yes ]; then
		ready=$((ready + 1))
		echo "vfio: $addr: IOMMU group $group:$members: ready"
	else
		echo "vfio: $addr: IOMMU group $group:$members: not ready (bind every function to vfio-pci, e.g. driverctl set-override ADDR vfio-pci)"
	fi
done
if [ $found -eq 0 ]; then
	echo "vfio: no NVIDIA GPU on the PCI bus"
else
	echo "vfio: $ready of $found NVIDIA GPUs ready for passthrough"
fi
