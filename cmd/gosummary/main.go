// Command gosummary reads `go test -json` (or `go build -json`) on its
// input and prints what a plain `go test` (or `go build -v`) prints — each
// package's ok/FAIL line, a failed test's own output, build errors, the
// packages a build compiles — then, after tests, one closing line that
// counts every test and subtest: "N passed, N failed, N skipped in P
// packages (T)". It exits 1 when anything failed, so `go test -json … |
// gosummary` stands where `go test …` stood (make test, make run).
//
// A dependency's build output that did not fail its build (go-nvml's cgo,
// which warns on every deprecated NVML call it wraps, 147 lines on a cold
// cache) is left out: it is the dependency's, not ours, and Go has no
// per-package C flags to silence it at the compiler. Our own packages'
// build output, and any failed build's, is printed whole.
//
//	go test -race -json ./... | go run ./cmd/gosummary -slowest 10
//	go build -v -json -o bin/gpugraph . | go run ./cmd/gosummary
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	slowest := flag.Int("slowest", 0, "also list the N slowest tests (top-level) with their times")
	module := flag.String("module", "gpugraph", "the import path prefix whose build output is always printed")
	flag.Parse()
	s := newSummary(os.Stdout, *module)
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "gosummary:", err)
		os.Exit(2)
	}
	s.close(*slowest)
	if s.failed() {
		os.Exit(1)
	}
}

// event is one line of `go test -json` (cmd/test2json's TestEvent, with
// the build events of Go 1.24 and later).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // build-output, build-fail
}

type testKey struct{ pkg, test string }

type summary struct {
	w      io.Writer
	module string
	start  time.Time

	passed, failedN, skipped int
	packages                 map[string]bool
	packageFailed            bool
	testOut                  map[testKey][]string // output held until the test ends
	pkgOut                   map[string][]string  // package-level output held until it ends
	buildOut                 map[string][]string  // a dependency's build output held until its build fails
	elapsed                  map[testKey]float64
}

func newSummary(w io.Writer, module string) *summary {
	return &summary{w: w, module: module, start: time.Now(), packages: map[string]bool{},
		testOut: map[testKey][]string{}, pkgOut: map[string][]string{}, buildOut: map[string][]string{},
		elapsed: map[testKey]float64{}}
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go vet's or the go command's own words): as is.
			fmt.Fprintf(s.w, "%s\n", line)
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func (s *summary) event(e event) {
	switch e.Action {
	case "build-output":
		// go build -v's line naming a package it compiles is progress,
		// whoever's package it is.
		if strings.HasPrefix(e.ImportPath, s.module) || e.Output == e.ImportPath+"\n" {
			io.WriteString(s.w, e.Output)
			return
		}
		s.buildOut[e.ImportPath] = append(s.buildOut[e.ImportPath], e.Output)
		return
	case "build-fail":
		for _, l := range s.buildOut[e.ImportPath] {
			io.WriteString(s.w, l)
		}
		delete(s.buildOut, e.ImportPath)
		s.packageFailed = true
		return
	}
	if e.Package == "" {
		return
	}
	s.packages[e.Package] = true
	if e.Test == "" {
		s.packageEvent(e)
		return
	}
	k := testKey{e.Package, e.Test}
	switch e.Action {
	case "output":
		if strings.HasPrefix(strings.TrimLeft(e.Output, " "), "=== ") {
			return // -json's framing (RUN, PAUSE, CONT), which go test does not print
		}
		s.testOut[k] = append(s.testOut[k], e.Output)
	case "pass":
		s.passed++
		s.end(k, e, false)
	case "skip":
		s.skipped++
		s.end(k, e, false)
	case "fail":
		s.failedN++
		s.end(k, e, true)
	}
}

// end prints a failed test's output as go test does (its subtests' own
// failures come with their own events) and forgets a passed one's.
func (s *summary) end(k testKey, e event, failed bool) {
	if !strings.Contains(k.test, "/") {
		s.elapsed[k] = e.Elapsed
	}
	if failed {
		for _, l := range s.testOut[k] {
			io.WriteString(s.w, l)
		}
	}
	delete(s.testOut, k)
}

func (s *summary) packageEvent(e event) {
	switch e.Action {
	case "output":
		// The package's closing line is printed as it comes; the rest
		// (a panic outside any test, a timeout's goroutine dump, "FAIL")
		// is held until the package is known to have failed.
		if strings.HasPrefix(e.Output, "ok  \t") || strings.HasPrefix(e.Output, "?   \t") ||
			strings.HasPrefix(e.Output, "FAIL\t") {
			io.WriteString(s.w, e.Output)
			return
		}
		if o := e.Output; o == "PASS\n" || o == "FAIL\n" || strings.HasPrefix(o, "=== ") || strings.HasPrefix(o, "--- ") {
			return
		}
		s.pkgOut[e.Package] = append(s.pkgOut[e.Package], e.Output)
	case "fail":
		s.packageFailed = true
		// Tests that never ended (a panic, the timeout) said what they
		// were doing before the package's own words.
		for k, out := range s.testOut {
			if k.pkg == e.Package {
				for _, l := range out {
					io.WriteString(s.w, l)
				}
				delete(s.testOut, k)
			}
		}
		for _, l := range s.pkgOut[e.Package] {
			io.WriteString(s.w, l)
		}
		fallthrough
	case "pass", "skip":
		delete(s.pkgOut, e.Package)
	}
}

func (s *summary) failed() bool { return s.failedN > 0 || s.packageFailed }

func (s *summary) close(slowest int) {
	if slowest > 0 {
		type timed struct {
			k testKey
			d float64
		}
		var all []timed
		for k, d := range s.elapsed {
			all = append(all, timed{k, d})
		}
		slices.SortFunc(all, func(a, b timed) int {
			return cmp.Or(cmp.Compare(b.d, a.d), strings.Compare(a.k.pkg, b.k.pkg), strings.Compare(a.k.test, b.k.test))
		})
		fmt.Fprintf(s.w, "slowest tests:\n")
		for i := 0; i < slowest && i < len(all); i++ {
			fmt.Fprintf(s.w, "  %7.2fs  %s %s\n", all[i].d, all[i].k.pkg, all[i].k.test)
		}
	}
	if len(s.packages) == 0 {
		return // a build: no tests to count
	}
	verdict := ""
	if s.packageFailed && s.failedN == 0 {
		verdict = " (a package failed outside its tests: see above)"
	}
	fmt.Fprintf(s.w, "%d passed, %d failed, %d skipped in %d packages (%s)%s\n",
		s.passed, s.failedN, s.skipped, len(s.packages), time.Since(s.start).Round(time.Second), verdict)
}
