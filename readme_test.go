package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpugraph/internal/lib/lockedbuf"
)

// readmeBlock is one fenced shell block of README.md or a page of docs/.
type readmeBlock struct {
	file string // README.md, docs/operating.md, …
	line int    // of its opening fence
	text string // the commands, indentation removed
	// notRun is why it is not run (a <!-- not run: … --> comment before
	// it); until is what a block that runs until stopped prints once it
	// works (<!-- runs until stopped: … "TEXT" … -->).
	notRun, until string
}

var (
	fenceOpen  = regexp.MustCompile("^(\\s*)```(sh|console)\\s*$")
	fenceClose = regexp.MustCompile("^\\s*```\\s*$")
	notRunNote = regexp.MustCompile(`^\s*<!-- not run: (.+?) -->\s*$`)
	untilNote  = regexp.MustCompile(`^\s*<!-- runs until stopped: .*?"([^"]+)".*-->\s*$`)
)

// readmeBlocks extracts the sh and console blocks of the Markdown file
// named file; a console block's commands are its lines after "$ " (and
// their continuation lines).
func readmeBlocks(file, readme string) ([]readmeBlock, error) {
	var out []readmeBlock
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := readmeBlock{file: file, line: i + 1}
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if n := notRunNote.FindStringSubmatch(lines[j]); n != nil {
				b.notRun = n[1]
			} else if n := untilNote.FindStringSubmatch(lines[j]); n != nil {
				b.until = n[1]
			}
			break
		}
		var body []string
		continued := false
		for i++; i < len(lines) && !fenceClose.MatchString(lines[i]); i++ {
			l := strings.TrimPrefix(lines[i], m[1])
			if m[2] == "console" {
				switch c, ok := strings.CutPrefix(l, "$ "); {
				case ok:
					l = c
				case !continued:
					continue // output
				}
				continued = strings.HasSuffix(l, "\\")
			}
			body = append(body, l)
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: the block is never closed", file, b.line)
		}
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out, nil
}

// raceBuild reports whether this test binary was built with -race, so
// the binaries the test builds reuse its compiled packages.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// docPages is README.md and then every Markdown page under docs/, at any
// depth, in lexical order: the files whose commands TestREADMECommands runs.
func docPages() ([]string, error) {
	pages := []string{"README.md"}
	err := filepath.WalkDir("docs", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, filepath.ToSlash(p))
		}
		return err
	})
	return pages, err
}

// TestREADMECommands runs every sh and console block of README.md and of
// every page under docs/ (README's first, then the pages in lexical order,
// each page's in its order) exactly as written against one fresh demo
// server of a freshly built gpugraph, as a reader would after make run:
// in a second shell, in the server's directory (whose gpugraph.db the
// subcommands use by default), with the binaries on PATH and
// GPUGRAPH_ADMIN_KEY set from the banner's line. The
// one substitution is the server's address, localhost:8080 in the text,
// since the test's server listens on a free port. Each block runs in its
// own bash with -e -o pipefail, so each command must succeed; curl runs
// with --fail-with-body, so an HTTP error fails it, and no answer may carry
// GraphQL errors. A block marked "runs until stopped" passes once it
// printed the text the mark names. The banner's three commands are run
// too. Blocks marked "not run" are listed with their reasons.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	pages, err := docPages()
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	perPage := map[string]int{}
	for _, p := range pages {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := readmeBlocks(p, string(text))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
		perPage[p] = len(bs)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl")
	}

	dir := t.TempDir()
	bin, wrap := filepath.Join(dir, "bin"), filepath.Join(dir, "wrap")
	for _, d := range []string{bin, wrap} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	buildFlags := []string{"build"}
	var raceEnv []string
	if raceBuild() {
		// A race-built binary sleeps a second at exit (to let other
		// goroutines report) unless told not to: a second per command.
		buildFlags, raceEnv = append(buildFlags, "-race"), []string{"GORACE=atexit_sleep_ms=0"}
	}
	// One go build links both at once; cmd/agent's binary is named agent.
	start := time.Now()
	build := exec.Command(goTool(), append(buildFlags, "-o", bin+string(os.PathSeparator), ".", "./cmd/agent")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Rename(filepath.Join(bin, "agent"), filepath.Join(bin, "gpugraph-agent")); err != nil {
		t.Fatal(err)
	}
	t.Logf("built gpugraph and gpugraph-agent in %v", time.Since(start).Round(time.Millisecond))
	wrapper := "#!/bin/sh\nexec " + curl + " --fail-with-body \"$@\"\n"
	if err := os.WriteFile(filepath.Join(wrap, "curl"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}

	// The reader's environment: nothing of gpugraph's set but what the
	// README says to set.
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "DATABASE_URL" && k != "ADDR" && k != "GORACE" && !strings.HasPrefix(k, "GPUGRAPH_") {
			env = append(env, kv)
		}
	}
	env = append(env, raceEnv...)
	addr := freeAddr(t)
	server := exec.Command(filepath.Join(bin, "gpugraph"), "--addr", addr)
	server.Dir, server.Env = dir, env
	out := &lockedbuf.Buffer{}
	server.Stdout, server.Stderr = out, out
	start = time.Now()
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "/v1/admin/keys") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the server printed its banner %v after its start", time.Since(start).Round(time.Millisecond))
	m := adminKeyLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the server printed no admin key:\n%s", out.String())
	}
	env = append(env, "PATH="+wrap+string(os.PathListSeparator)+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GPUGRAPH_ADMIN_KEY="+m[1])

	var try []string
	_, tail, _ := strings.Cut(out.String(), "\nTry")
	for _, l := range strings.Split(tail, "\n")[1:] {
		if c, ok := strings.CutPrefix(l, "  curl "); ok {
			try = append(try, "curl "+c)
		}
	}
	if len(try) != 3 {
		t.Fatalf("the banner has %d commands to try, want 3:\n%s", len(try), out.String())
	}
	blocks = append(blocks, readmeBlock{text: strings.Join(try, "\n") + "\n"})

	ran := 0
	for _, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		if b.line == 0 {
			where = "the banner's commands"
		}
		if b.notRun != "" {
			t.Logf("%s: not run: %s", where, b.notRun)
			continue
		}
		script := strings.ReplaceAll(b.text, "localhost:8080", addr)
		cmd := exec.Command(bash, "-e", "-o", "pipefail", "-x", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		got := &lockedbuf.Buffer{}
		cmd.Stdout, cmd.Stderr = got, got
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		stopped, err := runUntil(ctx, cmd, func() bool { return b.until != "" && strings.Contains(got.String(), b.until) })
		cancel()
		switch {
		case b.until != "" && !stopped:
			t.Errorf("%s: it ended (%v) before it printed %q\n%s\n--- it printed:\n%s", where, err, b.until, b.text, got.String())
		case err != nil:
			t.Errorf("%s: %v\n%s\n--- it printed:\n%s", where, err, b.text, got.String())
		case strings.Contains(got.String(), `"errors":[`):
			t.Errorf("%s: an answer carries GraphQL errors\n%s\n--- it printed:\n%s", where, b.text, got.String())
		}
		t.Logf("%s: ran in %v", where, time.Since(began).Round(time.Millisecond))
		if os.Getenv("README_TEST_SHOW") != "" {
			t.Logf("%s:\n%s", where, got.String())
		}
		ran++
	}
	if ran < 6 {
		t.Errorf("ran %d blocks: README.md and docs/ have lost their commands?", ran)
	}
	// The pages that hold commands today: a page that loses them all, or a
	// move that drops a page from the walk, shows here.
	for _, p := range []string{"README.md", "docs/operating.md"} {
		if perPage[p] == 0 {
			t.Errorf("%s has no command block", p)
		}
	}
	if t.Failed() {
		t.Logf("the server printed:\n%s", out.String())
	}
}

// runUntil runs cmd until it exits, or until done holds (then it is
// stopped, with its children: stopped is true), or ctx ends.
func runUntil(ctx context.Context, cmd *exec.Cmd, done func() bool) (stopped bool, err error) {
	if err := cmd.Start(); err != nil {
		return false, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-exited }
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return done(), err
		case <-tick.C:
			if done() {
				stop()
				return true, nil
			}
		case <-ctx.Done():
			stop()
			return false, ctx.Err()
		}
	}
}

// goTool is the go command that built this test.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// The README parser: fences (indented ones too), marks, console prompts.
func TestREADMEBlocks(t *testing.T) {
	md := "text\n\n<!-- not run: it would recurse -->\n```sh\nmake test\n```\n\n" +
		"- item\n\n  <!-- runs until stopped: waits for \"ready\" -->\n  ```sh\n  serve \\\n    --flag\n  ```\n" +
		"```console\n$ echo a \\\n  b\na b\n$ true\n```\n```go\nnot = shell\n```\n"
	got, err := readmeBlocks("README.md", md)
	if err != nil {
		t.Fatal(err)
	}
	want := []readmeBlock{
		{file: "README.md", line: 4, text: "make test\n", notRun: "it would recurse"},
		{file: "README.md", line: 11, text: "serve \\\n  --flag\n", until: "ready"},
		{file: "README.md", line: 15, text: "echo a \\\n  b\ntrue\n"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("blocks\n%+v\nwant\n%+v", got, want)
	}
	if _, err := readmeBlocks("docs/operating.md", "```sh\nopen\n"); err == nil || err.Error() != "docs/operating.md:1: the block is never closed" {
		t.Errorf("unclosed: %v", err)
	}
}

// The pages whose commands run: README first, then every page under docs/,
// nested folders included (the decisions' records), in lexical order.
func TestDocPages(t *testing.T) {
	pages, err := docPages()
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 || pages[0] != "README.md" {
		t.Fatalf("pages %v: README.md is not first", pages)
	}
	if !slices.IsSorted(pages[1:]) {
		t.Errorf("pages %v: docs/ not in lexical order", pages)
	}
	for _, want := range []string{"docs/contract.md", "docs/operating.md", "docs/decisions/README.md", "docs/decisions/0011-limits.md"} {
		if !slices.Contains(pages, want) {
			t.Errorf("pages %v lack %s", pages, want)
		}
	}
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#+ (.+)$`)
	mdFence   = regexp.MustCompile("(?s)```.*?```")
	notSlug   = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// headingAnchors is the anchors GitHub gives a page's headings: lower
// case, punctuation dropped, spaces as hyphens.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(md, ""), -1) {
		h := notSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
		out[strings.ReplaceAll(h, " ", "-")] = true
	}
	return out
}

// Every relative link of README, BENCHMARKS.md, the demo's README and the
// pages under docs/ names a file that exists and, for a page, a heading
// it has: moving a section must move its links along.
func TestDocLinks(t *testing.T) {
	pages, err := docPages()
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "BENCHMARKS.md", "demo/README.md")
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, p := range pages {
		for _, m := range mdLink.FindAllStringSubmatch(mdFence.ReplaceAllString(read(p), ""), -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			to := p
			if file != "" {
				to = filepath.ToSlash(filepath.Join(filepath.Dir(p), file))
			}
			if !fileExists(to) {
				t.Errorf("%s: %s: no %s", p, target, to)
				continue
			}
			if anchor != "" && strings.HasSuffix(to, ".md") && !headingAnchors(read(to))[anchor] {
				t.Errorf("%s: %s: %s has no heading #%s", p, target, to, anchor)
			}
		}
	}
}
