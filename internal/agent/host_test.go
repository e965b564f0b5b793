package agent

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMemTotal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(p, []byte("MemTotal:       131891256 kB\nMemFree:         1024 kB\n"), 0o644)
	got, err := memTotalBytes(p)
	if err != nil || got != 131891256*1024 {
		t.Fatalf("memTotalBytes = %d, %v", got, err)
	}
	os.WriteFile(p, []byte("MemFree: 1 kB\n"), 0o644)
	if _, err := memTotalBytes(p); err == nil {
		t.Fatal("want an error without MemTotal")
	}
}

func TestReadHostInfo(t *testing.T) {
	h, err := ReadHostInfo()
	if err != nil {
		t.Fatal(err)
	}
	if h.CPUCores < 1 || h.RAMGB < 0 || h.DiskGB < 0 {
		t.Fatalf("implausible host: %+v", h)
	}
}
