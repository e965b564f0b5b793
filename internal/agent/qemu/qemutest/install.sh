#!/bin/sh
# Installs what the QEMU runtime's tests boot, for CI: Debian's QEMU
# (qemu-system-x86, qemu-utils) and busybox-static when absent, then the
# test guest (Debian's cloud kernel fetched with apt-get download and
# unpacked, a busybox initramfs) built into a cache outside the
# repository: $GPUGRAPH_QEMU_GUEST_DIR, else the user cache directory
# (~/.cache/gpugraph-qemu-guest). A cache already filled is kept. Needs
# root for apt-get, and a package mirror.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v qemu-system-x86_64 >/dev/null 2>&1 || ! command -v qemu-img >/dev/null 2>&1 || [ ! -x /bin/busybox ]; then
	echo "qemutest: installing qemu-system-x86, qemu-utils and busybox-static"
	apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-system-x86 qemu-utils busybox-static >/dev/null
fi
cd "$here/../../../.."
GPUGRAPH_REQUIRE_QEMU=1 go test -count=1 -run '^TestGuest$' ./internal/agent/qemu/qemutest
