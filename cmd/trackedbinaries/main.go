// Command trackedbinaries fails when git tracks a build output: a compiled
// executable or object (ELF, Mach-O, PE, WebAssembly, an ar archive such as
// Go's .a) or any file with the executable bit over 1 MiB (a script is
// executable too, but small). It reads what the index holds, so a binary
// that is staged but deleted from the work tree still counts, and an
// untracked one in the work tree does not. make lint runs it; every binary
// builds into bin/, which .gitignore keeps out.
//
//	go run ./cmd/trackedbinaries    (exits 1 and names each offender)
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// maxExecutable is the largest executable-mode file that is taken for a
// script: the repository's own are a few KiB.
const maxExecutable = 1 << 20

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	found, err := check(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trackedbinaries:", err)
		os.Exit(2)
	}
	for _, f := range found {
		fmt.Fprintf(os.Stderr, "%s: %s is tracked by git; build outputs stay out of the repository (make build writes them to bin/, which git ignores): git rm --cached %s\n", f.Path, f.Why, f.Path)
	}
	if len(found) > 0 {
		os.Exit(1)
	}
}

// finding is one tracked file that is a build output, and what gave it away.
type finding struct {
	Path string
	Why  string
}

// entry is one line of `git ls-files -s`: the file's mode, blob and path.
type entry struct {
	mode, object, path string
}

// check lists the index of the repository holding dir (the whole
// repository, whatever subdirectory dir is) and returns its build outputs
// in the index's order.
func check(dir string) ([]finding, error) {
	top, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return nil, fmt.Errorf("git rev-parse in %s: %w", dir, err)
	}
	root := strings.TrimSpace(string(top))
	out, err := exec.Command("git", "-C", root, "ls-files", "-s", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var entries []entry
	for rec := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(rec, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("git ls-files: unreadable line %q", rec)
		}
		if fields[0] == "160000" { // a submodule: a commit, not a file
			continue
		}
		entries = append(entries, entry{mode: fields[0], object: fields[1], path: path})
	}
	if len(entries) == 0 {
		return nil, nil
	}

	// One git cat-file reads every blob; each answer is
	// "<object> blob <size>\n<content>\n".
	cmd := exec.Command("git", "-C", root, "cat-file", "--batch")
	var objects bytes.Buffer
	for _, e := range entries {
		objects.WriteString(e.object + "\n")
	}
	cmd.Stdin = &objects
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	r := bufio.NewReader(stdout)
	var found []finding
	var readErr error
	for _, e := range entries {
		content, err := readBlob(r)
		if err != nil {
			readErr = fmt.Errorf("git cat-file, reading %s: %w", e.path, err)
			break
		}
		if why := classify(e.mode, content); why != "" {
			found = append(found, finding{Path: e.path, Why: why})
		}
	}
	_, _ = io.Copy(io.Discard, r)
	if err := cmd.Wait(); err != nil && readErr == nil {
		readErr = fmt.Errorf("git cat-file: %w", err)
	}
	return found, readErr
}

// readBlob reads one answer of git cat-file --batch.
func readBlob(r *bufio.Reader) ([]byte, error) {
	header, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(header)
	if len(fields) != 3 {
		return nil, fmt.Errorf("unexpected answer %q", strings.TrimSpace(header))
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil {
		return nil, fmt.Errorf("unexpected size in %q", strings.TrimSpace(header))
	}
	content := make([]byte, size+1) // the content, then a newline
	if _, err := io.ReadFull(r, content); err != nil {
		return nil, err
	}
	if content[size] != '\n' {
		return nil, errors.New("answer not closed by a newline")
	}
	return content[:size], nil
}

// classify says what makes a file of this git mode and content a build
// output, or "" when it is none.
func classify(mode string, content []byte) string {
	switch {
	case bytes.HasPrefix(content, []byte("\x7fELF")):
		return "an ELF executable or object"
	case hasPrefixAny(content, "\xfe\xed\xfa\xce", "\xfe\xed\xfa\xcf", "\xce\xfa\xed\xfe", "\xcf\xfa\xed\xfe"):
		return "a Mach-O executable or object"
	case hasPrefixAny(content, "\xca\xfe\xba\xbe", "\xca\xfe\xba\xbf"):
		return "a universal Mach-O binary (or a Java class file)"
	case isPE(content):
		return "a PE (Windows) executable"
	case bytes.HasPrefix(content, []byte("\x00asm")):
		return "a WebAssembly module"
	case bytes.HasPrefix(content, []byte("!<arch>\n")):
		return "an ar archive (a compiled library)"
	case mode == "100755" && len(content) > maxExecutable:
		return fmt.Sprintf("an executable file of %d bytes (over %d)", len(content), maxExecutable)
	}
	return ""
}

func hasPrefixAny(content []byte, prefixes ...string) bool {
	for _, p := range prefixes {
		if bytes.HasPrefix(content, []byte(p)) {
			return true
		}
	}
	return false
}

// isPE reports a DOS stub ("MZ") whose header offset, at 0x3c, points at a
// PE signature: "MZ" alone also opens text.
func isPE(content []byte) bool {
	if len(content) < 0x40 || !bytes.HasPrefix(content, []byte("MZ")) {
		return false
	}
	off := int64(binary.LittleEndian.Uint32(content[0x3c:]))
	return off+4 <= int64(len(content)) && string(content[off:off+4]) == "PE\x00\x00"
}
