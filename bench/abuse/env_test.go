package abuse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"gpugraph/bench/proc"
	"gpugraph/internal/store"
)

func TestAnswer(t *testing.T) {
	for _, c := range []struct {
		status int
		err    error
		want   string
	}{
		{401, nil, "401"},
		{0, context.DeadlineExceeded, "open"},
		{0, fmt.Errorf("Post: %w", context.Canceled), "open"},
		{0, fmt.Errorf("read: %w", syscall.ECONNRESET), "reset"},
		{0, io.ErrUnexpectedEOF, "reset"},
		{0, errors.New("no such host"), "error"},
	} {
		if got := answer(c.status, c.err); got != c.want {
			t.Errorf("answer(%d, %v) = %q, want %q", c.status, c.err, got, c.want)
		}
	}
}

func TestGraphQLCode(t *testing.T) {
	code, msg := gqlCode([]byte(`{"errors":[{"message":"too deep","extensions":{"code":"BAD_REQUEST","status":400}}],"data":null}`))
	if code != "BAD_REQUEST" || msg != "too deep" {
		t.Errorf("gqlCode = %q %q", code, msg)
	}
	if code, _ := gqlCode([]byte(`{"data":{"vms":null}}`)); code != "" {
		t.Errorf("an answer without errors has code %q", code)
	}
}

func TestMetricValue(t *testing.T) {
	body := []byte("# HELP go_gc_gogc_percent x\n# TYPE go_gc_gogc_percent gauge\ngo_gc_gogc_percent 400\ngo_memstats_next_gc_bytes 1.25e+08\ngo_memstats_next_gc_bytes_other 7\n")
	if v := metricValue(body, "go_memstats_next_gc_bytes"); v != 1.25e8 {
		t.Errorf("next_gc = %v", v)
	}
	if v := metricValue(body, "go_gc_gogc_percent"); v != 400 {
		t.Errorf("gogc = %v", v)
	}
	if v := metricValue(body, "absent"); v != 0 {
		t.Errorf("absent = %v", v)
	}
}

// TestMeasure measures a real process: a shell that spins. The CPU read
// is the process's, and a phase that runs out of its box says so and
// leaves the servers to be restarted.
func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	p, err := proc.Start("spinner", filepath.Join(dir, "log"), dir, nil, "/bin/sh", "-c", "while :; do :; done")
	if err != nil {
		t.Skipf("no shell to spin: %v", err)
	}
	defer p.Kill()
	e := &env{cfg: Config{Box: time.Second}, engine: store.SQLite, reps: []*replica{{proc: p}}}
	f := e.measure(context.Background(), time.Second, func(ctx context.Context) { time.Sleep(300 * time.Millisecond) })
	if f.cpu <= 0 || f.cpu > f.took+2*proc.Tick || f.timedOut || e.dirty {
		t.Errorf("300 ms of a spinning process: %+v, dirty %v", f, e.dirty)
	}
	f = e.measure(context.Background(), 100*time.Millisecond, func(ctx context.Context) { <-ctx.Done() })
	if !f.timedOut || !e.dirty {
		t.Errorf("a phase cut by its box: %+v, dirty %v", f, e.dirty)
	}
	var r Result
	r.record(f, 2*time.Second, 4, 2)
	r.record(figures{peak: 1 << 40}, time.Hour, 1, 1)
	if r.CPU != 500*time.Millisecond || r.Memory != f.peak/2 || !r.Lower || r.Requests != 4 {
		t.Errorf("recorded CPU %v, memory %d, lower %v, requests %d: want the first phase's figures per request, marked lower", r.CPU, r.Memory, r.Lower, r.Requests)
	}
}
