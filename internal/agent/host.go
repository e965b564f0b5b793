package agent

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// HostInfo is the node's non-GPU capacity as reported in the inventory.
// RAM and disk are in GiB, rounded down.
type HostInfo struct {
	CPUCores int
	RAMGB    int
	DiskGB   int
}

const gib = 1 << 30

// ReadHostInfo measures this host: logical CPUs usable by the agent, total
// RAM from /proc/meminfo, and the size of the filesystem holding /.
func ReadHostInfo() (HostInfo, error) {
	h := HostInfo{CPUCores: runtime.NumCPU()}
	ram, err := memTotalBytes("/proc/meminfo")
	if err != nil {
		return h, err
	}
	h.RAMGB = int(ram / gib)
	var st syscall.Statfs_t
	if err := syscall.Statfs("/", &st); err != nil {
		return h, fmt.Errorf("statfs /: %w", err)
	}
	h.DiskGB = int(st.Blocks * uint64(st.Bsize) / gib)
	return h, nil
}

func memTotalBytes(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "MemTotal:       131891256 kB"
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: MemTotal %q: %w", path, fields[1], err)
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no MemTotal line", path)
}
