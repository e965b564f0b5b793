package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

var duration = regexp.MustCompile(`packages \([^)]*\)`)

// summarize reads stream as gosummary does and answers what it printed,
// the run's duration written "(…)", and the summary.
func summarize(t *testing.T, stream, module string, slowest int) (string, *summary) {
	t.Helper()
	var out strings.Builder
	s := newSummary(&out, module)
	if err := s.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	s.close(slowest)
	return duration.ReplaceAllString(out.String(), "packages (…)"), s
}

// testdata/mixed.json is what `go test -json ./...` printed for a module
// with a passing test (two subtests, a log line), a failing one, a skipped
// one, a package that does not build and one without tests.
func TestSummaryPrintsWhatGoTestPrints(t *testing.T) {
	in, err := os.ReadFile("testdata/mixed.json")
	if err != nil {
		t.Fatal(err)
	}
	got, s := summarize(t, string(in), "example.com/tsmod", 1)
	want := `# example.com/tsmod/broken [example.com/tsmod/broken.test]
broken/b.go:3:23: cannot use "x" (untyped string constant) as int value in return statement
FAIL	example.com/tsmod/broken [build failed]
?   	example.com/tsmod/empty	[no test files]
    a_test.go:13: want 1, got 2
--- FAIL: TestFail/bad (0.00s)
--- FAIL: TestFail (0.00s)
FAIL	example.com/tsmod	0.135s
slowest tests:
     0.00s  example.com/tsmod TestFail
4 passed, 2 failed, 1 skipped in 3 packages (…)
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if !s.failed() {
		t.Error("a run with a failed test and a failed build is not failed")
	}
}

func TestSummaryDropsADependencysWarningsUnlessItsBuildFails(t *testing.T) {
	const stream = `{"ImportPath":"github.com/NVIDIA/go-nvml/pkg/nvml","Action":"build-output","Output":"# github.com/NVIDIA/go-nvml/pkg/nvml\n"}
{"ImportPath":"github.com/NVIDIA/go-nvml/pkg/nvml","Action":"build-output","Output":"cgo-gcc-prolog:263:2: warning: 'nvmlDeviceGetTemperature' is deprecated\n"}
{"ImportPath":"github.com/mattn/go-sqlite3","Action":"build-output","Output":"sqlite3.c:1: error: out of memory\n"}
{"ImportPath":"github.com/mattn/go-sqlite3","Action":"build-fail"}
{"ImportPath":"gpugraph/agent","Action":"build-output","Output":"agent/x.go:1: our own warning\n"}
{"Action":"start","Package":"gpugraph/agent"}
{"Action":"run","Package":"gpugraph/agent","Test":"TestA"}
{"Action":"output","Package":"gpugraph/agent","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"gpugraph/agent","Test":"TestA","Output":"    a_test.go:9: only a failure shows this\n"}
{"Action":"output","Package":"gpugraph/agent","Test":"TestA","Output":"--- PASS: TestA (1.50s)\n"}
{"Action":"pass","Package":"gpugraph/agent","Test":"TestA","Elapsed":1.5}
{"Action":"output","Package":"gpugraph/agent","Output":"PASS\n"}
{"Action":"output","Package":"gpugraph/agent","Output":"ok  \tgpugraph/agent\t1.6s\n"}
{"Action":"pass","Package":"gpugraph/agent","Elapsed":1.6}
`
	got, s := summarize(t, stream, "gpugraph", 0)
	want := "sqlite3.c:1: error: out of memory\nagent/x.go:1: our own warning\nok  \tgpugraph/agent\t1.6s\n" +
		"1 passed, 0 failed, 0 skipped in 1 packages (…) (a package failed outside its tests: see above)\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if !s.failed() {
		t.Error("a dependency that failed to build does not fail the run")
	}
}

// A test binary that panics or times out ends its package without ending
// the running test: what that test said is printed before the package's
// own words.
func TestSummaryPrintsAnUnendedTestWhenItsPackageFails(t *testing.T) {
	const stream = `{"Action":"run","Package":"gpugraph/store","Test":"TestSlow"}
{"Action":"output","Package":"gpugraph/store","Test":"TestSlow","Output":"    slow_test.go:3: waiting for the writer\n"}
{"Action":"output","Package":"gpugraph/store","Test":"TestSlow","Output":"panic: test timed out after 20m0s\n"}
{"Action":"output","Package":"gpugraph/store","Output":"FAIL\tgpugraph/store\t1200.0s\n"}
{"Action":"fail","Package":"gpugraph/store","Elapsed":1200}
`
	got, s := summarize(t, stream, "gpugraph", 0)
	want := "FAIL\tgpugraph/store\t1200.0s\n    slow_test.go:3: waiting for the writer\npanic: test timed out after 20m0s\n" +
		"0 passed, 0 failed, 0 skipped in 1 packages (…) (a package failed outside its tests: see above)\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if !s.failed() {
		t.Error("a package that failed outside its tests does not fail the run")
	}
}

// go build -v -json: the packages it compiles are listed, whoever's; a
// dependency's warnings are not; a build has no tests to count.
func TestSummaryOfABuild(t *testing.T) {
	const stream = `{"ImportPath":"github.com/NVIDIA/go-nvml/pkg/nvml","Action":"build-output","Output":"github.com/NVIDIA/go-nvml/pkg/nvml\n"}
{"ImportPath":"github.com/NVIDIA/go-nvml/pkg/nvml","Action":"build-output","Output":"# github.com/NVIDIA/go-nvml/pkg/nvml\n"}
{"ImportPath":"github.com/NVIDIA/go-nvml/pkg/nvml","Action":"build-output","Output":"cgo-gcc-prolog:263:2: warning: 'nvmlDeviceGetTemperature' is deprecated\n"}
{"ImportPath":"gpugraph","Action":"build-output","Output":"gpugraph\n"}
`
	got, s := summarize(t, stream, "gpugraph", 0)
	if want := "github.com/NVIDIA/go-nvml/pkg/nvml\ngpugraph\n"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if s.failed() {
		t.Error("a build that succeeded failed")
	}
}
