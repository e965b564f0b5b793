package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// peStub is the opening of a Windows executable: a DOS header whose offset
// at 0x3c points at the PE signature.
func peStub() []byte {
	b := make([]byte, 0x80+4)
	copy(b, "MZ")
	binary.LittleEndian.PutUint32(b[0x3c:], 0x80)
	copy(b[0x80:], "PE\x00\x00")
	return b
}

func TestClassify(t *testing.T) {
	big := bytes.Repeat([]byte("#"), maxExecutable+1)
	cases := []struct {
		name, mode string
		content    []byte
		want       string
	}{
		{"elf", "100644", []byte("\x7fELF\x02\x01\x01"), "an ELF executable or object"},
		{"macho64", "100755", []byte("\xcf\xfa\xed\xfe\x07\x00\x00\x01"), "a Mach-O executable or object"},
		{"macho32be", "100644", []byte("\xfe\xed\xfa\xce"), "a Mach-O executable or object"},
		{"fat", "100644", []byte("\xca\xfe\xba\xbe\x00\x00\x00\x02"), "a universal Mach-O binary (or a Java class file)"},
		{"pe", "100644", peStub(), "a PE (Windows) executable"},
		{"wasm", "100644", []byte("\x00asm\x01\x00\x00\x00"), "a WebAssembly module"},
		{"archive", "100644", []byte("!<arch>\n__.PKGDEF"), "an ar archive (a compiled library)"},
		{"big executable", "100755", big, "an executable file of 1048577 bytes (over 1048576)"},
		// Not build outputs.
		{"big plain file", "100644", big, ""},
		{"script", "100755", []byte("#!/usr/bin/env bash\necho hi\n"), ""},
		{"text opening with MZ", "100644", append([]byte("MZ is a postcode"), make([]byte, 0x80)...), ""},
		{"MZ with a header offset past the end", "100644", func() []byte {
			b := peStub()[:0x40]
			return b
		}(), ""},
		{"empty", "100644", nil, ""},
		{"go source", "100644", []byte("package main\n"), ""},
	}
	for _, c := range cases {
		if got := classify(c.mode, c.content); got != c.want {
			t.Errorf("%s: classify = %q, want %q", c.name, got, c.want)
		}
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestCheckReadsTheIndex runs the check on a repository of its own: it
// finds what the index holds (a binary deleted from the work tree after
// git add still counts; an untracked one does not), from a subdirectory
// too, and names each file with its reason.
func TestCheckReadsTheIndex(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	write := func(name string, content []byte, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", []byte("package main\n"), 0o644)
	write("run.sh", []byte("#!/bin/sh\nexit 0\n"), 0o755)
	write("tool", []byte("\x7fELF\x02\x01\x01\x00rest"), 0o755)
	write("sub/lib.a", []byte("!<arch>\nx"), 0o644)
	write("sub/big", bytes.Repeat([]byte{'x'}, maxExecutable+10), 0o755)
	write("staged.exe", peStub(), 0o644)
	git(t, dir, "add", ".")
	if err := os.Remove(filepath.Join(dir, "staged.exe")); err != nil {
		t.Fatal(err)
	}
	write("untracked", []byte("\x7fELF"), 0o755)

	want := []finding{
		{"staged.exe", "a PE (Windows) executable"},
		{"sub/big", "an executable file of 1048586 bytes (over 1048576)"},
		{"sub/lib.a", "an ar archive (a compiled library)"},
		{"tool", "an ELF executable or object"},
	}
	for _, from := range []string{dir, filepath.Join(dir, "sub")} {
		got, err := check(from)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("check(%s) = %v, want %v", from, got, want)
		}
	}

	git(t, dir, "rm", "-q", "--cached", "tool", "sub/lib.a", "sub/big", "staged.exe")
	got, err := check(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("after git rm --cached: check = %v, want none", got)
	}
}

// TestRepositoryTracksNoBinary is make lint's check on this repository.
func TestRepositoryTracksNoBinary(t *testing.T) {
	if err := exec.Command("git", "rev-parse", "--show-toplevel").Run(); err != nil {
		t.Skip("not in a git work tree")
	}
	got, err := check(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		t.Errorf("%s is tracked: %s", f.Path, f.Why)
	}
}
