package qemu

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadCatalog: NAME.qcow2 is a base image, NAME/ with vmlinuz a
// direct boot with its optional parts; anything else is not an image.
func TestLoadCatalog(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	write("debian-13.qcow2", "")
	write("tiny/vmlinuz", "")
	write("tiny/initrd", "")
	write("tiny/cmdline", "quiet gpugraph.poweroff\n")
	write("tiny/ready-line", "gpugraph-guest: ready\n")
	write("bare/vmlinuz", "")
	write("notes.txt", "")
	write("empty/readme", "")
	got, err := LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Image{
		"debian-13": {Base: filepath.Join(dir, "debian-13.qcow2")},
		"tiny": {Kernel: filepath.Join(dir, "tiny/vmlinuz"), Initrd: filepath.Join(dir, "tiny/initrd"),
			Cmdline: "quiet gpugraph.poweroff", ReadyLine: "gpugraph-guest: ready"},
		"bare": {Kernel: filepath.Join(dir, "bare/vmlinuz")},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("catalog\n got %v\nwant %v", got, want)
	}
	if _, err := LoadCatalog(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory: no error")
	}
}
