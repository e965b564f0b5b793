package qemutest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// StateDir answers a fresh directory for a QEMU runtime's state, short
// enough for its QMP sockets (a unix socket path is at most 107 bytes,
// which a test's own temporary directory may pass). When t ends, every
// QEMU whose command line names it is killed (an agent leaves its VMs
// running for the next one to adopt) and it is removed.
func StateDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "qemu-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range Running(dir) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		os.RemoveAll(dir)
	})
	return dir
}

// Running answers the pids of the live QEMU processes whose command line
// names a path under dir (zombies left out).
func Running(dir string) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if !strings.Contains(string(b), "qemu-system") || !strings.Contains(string(b), dir+"/") {
			continue
		}
		st, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		// stat is "pid (comm) state …"; comm may hold spaces.
		if i := strings.LastIndexByte(string(st), ')'); i < 0 || strings.HasPrefix(strings.TrimSpace(string(st[i+1:])), "Z") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
