package qemu

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestConsoleTail: Console answers the last 64 KiB of a VM's console, a
// console past 1 MiB is cut to its tail at the next boot, and an unknown
// or malformed id is not found.
func TestConsoleTail(t *testing.T) {
	dir := t.TempDir()
	r := &Runtime{cfg: Config{StateDir: dir}}
	must(t, os.MkdirAll(filepath.Join(dir, "vms", "vm-1"), 0o700))
	path := filepath.Join(dir, "vms", "vm-1", "console.log")
	data := make([]byte, 100<<10)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	must(t, os.WriteFile(path, data, 0o600))
	got, err := r.Console("vm-1")
	if err != nil || !bytes.Equal(got, data[len(data)-ConsoleTail:]) {
		t.Errorf("Console: %d bytes, %v; want the last %d", len(got), err, ConsoleTail)
	}
	trimConsole(path)
	if b, _ := os.ReadFile(path); len(b) != len(data) {
		t.Errorf("a 100 KiB console was cut to %d bytes; it is kept below 1 MiB", len(b))
	}
	big := bytes.Repeat(data, 11) // 1.1 MiB
	must(t, os.WriteFile(path, big, 0o600))
	trimConsole(path)
	if b, _ := os.ReadFile(path); !bytes.Equal(b, big[len(big)-ConsoleTail:]) {
		t.Errorf("a 1.1 MiB console was cut to %d bytes, want its last %d", len(b), ConsoleTail)
	}
	for _, id := range []string{"vm-2", "../vms/vm-1", ""} {
		if _, err := r.Console(id); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Console(%q): %v, want not found", id, err)
		}
	}
}
