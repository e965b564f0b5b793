#!/bin/sh
# make gpu-check: build the agent, run it against this machine's real NVML
# (no --mock), print what it reads (inventory, health, the XID watch, the
# exporter's metrics) and fail on any difference from nvidia-smi (GPU
# count, UUIDs, names, memory, PCI bus ids). Where there is no GPU or no
# nvidia-smi it says so and exits 0. Bounded: every wait has a limit, the
# whole run stays under 3 minutes (the first build is most of it).
set -eu
cd "$(dirname "$0")/.."

skip() { echo "gpu-check: skipped: $1"; exit 0; }
fail() { echo "gpu-check: FAIL: $1" >&2; exit 1; }

# First, as it reads sysfs only: a GPU bound to vfio-pci for a VM is
# invisible to NVML and nvidia-smi.
echo "gpu-check: VFIO readiness (the QEMU runtime's passthrough; a report, never a failure)"
sh scripts/vfio-report.sh

command -v nvidia-smi >/dev/null 2>&1 || skip "nvidia-smi is not installed (no NVIDIA driver on this host)"
timeout 30 nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi finds no GPU"

tmp=$(mktemp -d)
agent_pid=
cleanup() { [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM

echo "gpu-check: building the agent"
timeout 150 go build -tags static_build -o "$tmp/gpugraph-agent" ./cmd/agent || fail "go build ./cmd/agent"

echo "gpu-check: nvidia-smi -q (summary)"
timeout 30 nvidia-smi -q | grep -E '^GPU |Product Name|GPU UUID|Bus Id|^        Total' || true

# nvidia-smi's view: index, uuid, name, memory MiB, bus id (domain cut to
# four digits, as the agent spells it).
timeout 30 nvidia-smi --query-gpu=index,uuid,name,memory.total,pci.bus_id --format=csv,noheader,nounits |
	awk -F', *' '{ split($5, a, ":"); d = substr(a[1], length(a[1]) - 3); printf "%s|%s|%s|%s|%s:%s:%s\n", $1, $2, $3, $4, toupper(d), toupper(a[2]), toupper(a[3]) }' |
	sort >"$tmp/smi"

# The agent starts, discovers the GPUs, arms the XID watch and serves the
# exporter before it first reaches a server; none is needed here, so it
# reports to a closed port and keeps retrying while we read it.
port=19400
"$tmp/gpugraph-agent" --server http://127.0.0.1:9 --token gpu-check --node-name gpu-check \
	--metrics-addr 127.0.0.1:$port >"$tmp/agent.log" 2>&1 &
agent_pid=$!
i=0
until grep -q 'watching for critical XIDs\|XID health checks' "$tmp/agent.log" && metrics=$(curl -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null); do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$tmp/agent.log"; fail "the agent exited"; }
	i=$((i + 1))
	[ $i -le 300 ] || { cat "$tmp/agent.log"; fail "the agent served no metrics within 30 s"; }
	sleep 0.1
done

echo "gpu-check: inventory the agent read through NVML"
grep 'GPU found' "$tmp/agent.log"
echo "gpu-check: XID watch"
grep -E 'watching for critical XIDs|XID health checks' "$tmp/agent.log"
grep -q 'XID health checks unavailable' "$tmp/agent.log" && fail "the XID watch could not be armed"
echo "gpu-check: exporter metrics"
echo "$metrics" | grep '^DCGM_FI_' || fail "the exporter serves no DCGM_FI_ series"

# The agent's view, the same five fields; memory from bytes to MiB.
grep 'GPU found' "$tmp/agent.log" | awk '{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	line = $0; sub(/.* name=/, "", line); sub(/ memoryBytes=.*/, "", line); gsub(/"/, "", line)
	printf "%s|%s|%s|%d|%s\n", v["index"], v["uuid"], line, v["memoryBytes"] / 1048576, v["address"] }' | sort >"$tmp/agent"

echo "gpu-check: health"
echo "$metrics" | grep -c '^DCGM_FI_DEV_XID_ERRORS' >/dev/null || true
grep -iE 'unhealthy|health.*failed' "$tmp/agent.log" && fail "a GPU is reported unhealthy"
echo "all $(wc -l <"$tmp/agent") GPUs healthy"

if ! diff -u "$tmp/smi" "$tmp/agent"; then
	fail "the agent's inventory (+) differs from nvidia-smi's (-): index|uuid|name|memory MiB|bus id"
fi
echo "gpu-check: ok: $(wc -l <"$tmp/agent") GPUs, UUIDs, names, memory and bus ids match nvidia-smi"
