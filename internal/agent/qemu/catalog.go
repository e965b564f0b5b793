package qemu

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LoadCatalog reads the VM image catalog an agent is given (--vm-images
// DIR): DIR/NAME.qcow2 is a base image NAME (each VM's disk a qcow2 over
// it); DIR/NAME/ holding vmlinuz (and optionally initrd, cmdline and
// ready-line, one line each) is a direct boot NAME with an empty disk.
// Anything else in DIR is ignored.
func LoadCatalog(dir string) (map[string]Image, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("VM images: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]Image{}
	for _, e := range entries {
		p := filepath.Join(abs, e.Name())
		if name, ok := strings.CutSuffix(e.Name(), ".qcow2"); ok && !e.IsDir() {
			out[name] = Image{Base: p}
			continue
		}
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(p, "vmlinuz")); err != nil {
			continue
		}
		img := Image{Kernel: filepath.Join(p, "vmlinuz")}
		if _, err := os.Stat(filepath.Join(p, "initrd")); err == nil {
			img.Initrd = filepath.Join(p, "initrd")
		}
		img.Cmdline = readLine(filepath.Join(p, "cmdline"))
		img.ReadyLine = readLine(filepath.Join(p, "ready-line"))
		out[e.Name()] = img
	}
	return out, nil
}

func readLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}
