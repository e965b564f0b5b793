package qemu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gpugraph/internal/agent/qemu/qemutest"
)

// TestConsoleTail: ConsoleTail answers the last 64 KiB of a VM's console;
// a console past its limit is rotated (its tail kept aside, the file
// emptied) and ConsoleTail still answers the last 64 KiB written, across
// the rotation; an unknown or malformed id is not found.
func TestConsoleTail(t *testing.T) {
	dir := t.TempDir()
	r := &Runtime{cfg: Config{StateDir: dir}}
	vmDir := filepath.Join(dir, "vms", "vm-1")
	must(t, os.MkdirAll(vmDir, 0o700))
	path := filepath.Join(vmDir, "console.log")
	data := make([]byte, 100<<10)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	must(t, os.WriteFile(path, data, 0o600))
	got, err := r.ConsoleTail("vm-1")
	if err != nil || !bytes.Equal(got, data[len(data)-ConsoleTailBytes:]) {
		t.Errorf("ConsoleTail: %d bytes, %v; want the last %d", len(got), err, ConsoleTailBytes)
	}
	rotateConsole(vmDir, DefaultConsoleLimit)
	if b, _ := os.ReadFile(path); len(b) != len(data) {
		t.Errorf("a 100 KiB console was cut to %d bytes; it is kept below 1 MiB", len(b))
	}

	// A writer that appends as QEMU does (O_APPEND), numbered lines, the
	// console rotated at a 256 KiB limit as it grows to 3 MiB.
	must(t, os.Remove(path))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	must(t, err)
	defer f.Close()
	var all bytes.Buffer
	for i := 0; all.Len() < 3<<20; i++ {
		line := fmt.Appendf(nil, "line %07d of a chatty guest\n", i)
		_, err := f.Write(line)
		must(t, err)
		all.Write(line)
		if i%1000 == 0 {
			rotateConsole(vmDir, 256<<10)
			if st, _ := os.Stat(path); st.Size() > 256<<10 {
				t.Fatalf("the console is %d bytes after a rotation, limit %d", st.Size(), 256<<10)
			}
		}
	}
	// A rotation now (any size is past a limit of 0), then a few lines:
	// the tail spans console.prev and the emptied file.
	rotateConsole(vmDir, 0)
	if st, _ := os.Stat(path); st.Size() != 0 {
		t.Errorf("the console is %d bytes after a rotation, want 0", st.Size())
	}
	for i := range 3 {
		line := fmt.Appendf(nil, "after the rotation %d\n", i)
		_, err := f.Write(line)
		must(t, err)
		all.Write(line)
	}
	if st, _ := os.Stat(filepath.Join(vmDir, "console.prev")); st == nil || st.Size() != ConsoleTailBytes {
		t.Errorf("console.prev: %v, want the %d bytes before the rotation", st, ConsoleTailBytes)
	}
	got, err = r.ConsoleTail("vm-1")
	want := all.Bytes()[all.Len()-ConsoleTailBytes:]
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("ConsoleTail after rotations: %d bytes, %v; want the last %d written, ending %q", len(got), err, len(want), want[len(want)-40:])
	}

	for _, id := range []string{"vm-2", "../vms/vm-1", ""} {
		if _, err := r.ConsoleTail(id); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("ConsoleTail(%q): %v, want not found", id, err)
		}
	}
}

// TestConsoleBoundedWhileRunning: the runtime itself rotates a console
// that passes its limit while the VM runs, not only at its next boot.
func TestConsoleBoundedWhileRunning(t *testing.T) {
	qemutest.Binary(t)
	dir := t.TempDir()
	rt, err := New(Config{StateDir: dir, Accel: AccelTCG, ConsoleLimit: 4096, ForwardAddr: "127.0.0.1"})
	must(t, err)
	defer rt.Close()
	vmDir := filepath.Join(dir, "vms", "vm-1")
	must(t, os.MkdirAll(vmDir, 0o700))
	path := filepath.Join(vmDir, "console.log")
	must(t, os.WriteFile(path, bytes.Repeat([]byte("x"), 10000), 0o600))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if st, _ := os.Stat(path); st != nil && st.Size() == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st, _ := os.Stat(path); st == nil || st.Size() != 0 {
		t.Fatalf("a 10000-byte console with a 4096-byte limit was not rotated: %v", st)
	}
	if b, err := rt.ConsoleTail("vm-1"); err != nil || len(b) != 10000 {
		t.Errorf("ConsoleTail after the rotation: %d bytes, %v; want the 10000 kept aside", len(b), err)
	}
}
