package supervise

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
)

// spec is a runtime's spec as the tests need it.
type spec struct {
	id     string
	gen    int
	action string
	gpus   []string
}

func (s spec) Head() Head { return Head{ID: s.id, Generation: s.gen, Action: s.action, GPUs: s.gpus} }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newSup answers a Supervisor whose workers are run, ended with the test.
func newSup(t *testing.T, run func(sv *Supervisor[spec], id string, w *Workload[spec])) *Supervisor[spec] {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var sv *Supervisor[spec]
	sv = New(Config[spec]{Ctx: ctx,
		Run:      func(id string, w *Workload[spec]) { run(sv, id, w) },
		Stop:     func(id string, gen int) spec { return spec{id: id, gen: gen, action: agentapi.ActionStop} },
		Stranger: func(s spec) Use { return Use{UUIDs: s.gpus, Any: len(s.gpus) == 0} }})
	t.Cleanup(func() { cancel(); sv.Wait() })
	return sv
}

// wait answers what c gives, or false once the test has ended (a
// worker never outlives a failed test).
func wait[T any](sv *Supervisor[spec], c <-chan T) (T, bool) {
	select {
	case v := <-c:
		return v, true
	case <-sv.cfg.Ctx.Done():
		var zero T
		return zero, false
	}
}

// TestLatestSpecWins: specs pushed while the worker reads none replace
// each other; the worker then reads only the newest.
func TestLatestSpecWins(t *testing.T) {
	gate := make(chan struct{})
	got := make(chan spec, 10)
	sv := newSup(t, func(sv *Supervisor[spec], id string, w *Workload[spec]) {
		if _, ok := wait(sv, gate); !ok {
			return
		}
		s, ok := wait(sv, w.Want())
		if !ok {
			return
		}
		got <- s
		select {
		case s := <-w.Want():
			got <- s
		default:
		}
		close(got)
	})
	for gen := 1; gen <= 3; gen++ {
		sv.Apply([]spec{{id: "a", gen: gen, action: agentapi.ActionRun}})
	}
	close(gate)
	var all []spec
	for s := range got {
		all = append(all, s)
	}
	if len(all) != 1 || all[0].gen != 3 {
		t.Fatalf("the worker read %+v, want only generation 3", all)
	}
}

// TestUnlistedStopPushedOnce: an id no longer listed is pushed one stop
// of its generation, not one per Apply that leaves it out; listed again
// and then left out again, it gets another. Once its worker says it is
// gone, the next Report says so and forgets it.
func TestUnlistedStopPushedOnce(t *testing.T) {
	step := make(chan struct{})
	got := make(chan spec, 10)
	sv := newSup(t, func(sv *Supervisor[spec], id string, w *Workload[spec]) {
		for range 4 {
			s, ok := wait(sv, w.Want())
			if !ok {
				return
			}
			w.Set(s.gen, agentapi.StateRunning, "", "")
			got <- s
		}
		if _, ok := wait(sv, step); !ok { // Apply(nil) twice more meanwhile
			return
		}
		select {
		case s := <-w.Want():
			got <- s
		default:
		}
		if !sv.Gone(id, w, 1) {
			t.Error("Gone of an unlisted workload answered false")
		}
		close(got)
	})
	run := []spec{{id: "a", gen: 1, action: agentapi.ActionRun}}
	stop := spec{id: "a", gen: 1, action: agentapi.ActionStop}
	expect := func(what string, want spec) {
		t.Helper()
		if s := <-got; s.id != want.id || s.gen != want.gen || s.action != want.action {
			t.Fatalf("%s: the worker read %+v, want %+v", what, s, want)
		}
	}
	sv.Apply(run)
	expect("listed", run[0])
	sv.Apply(nil)
	expect("left out", stop)
	sv.Apply(nil)
	sv.Apply(run)
	expect("left out again, then listed again", run[0])
	sv.Apply(nil)
	expect("left out after it was listed again", stop)
	sv.Apply(nil)
	sv.Apply(nil)
	close(step)
	if s, ok := <-got; ok {
		t.Fatalf("a stop was pushed again to an id already unlisted: %+v", s)
	}
	if r := sv.Report(); len(r) != 1 || r[0] != (agentapi.WorkloadReport{ID: "a", Generation: 1, State: agentapi.StateGone}) {
		t.Fatalf("report %+v, want a gone", r)
	}
	if r := sv.Report(); len(r) != 0 {
		t.Fatalf("report after gone was reported: %+v, want it forgotten", r)
	}
}

// TestGPUNeverClaimedTwice: many workloads on one GPU, the list applied
// from several goroutines at once, each workload holding the GPU a while
// then letting it go: never two hold it at a time, and every one gets it.
func TestGPUNeverClaimedTwice(t *testing.T) {
	var holders, most, runs atomic.Int32
	sv := newSup(t, func(sv *Supervisor[spec], id string, w *Workload[spec]) {
		var cur spec
		have := false
		for {
			var s spec
			select {
			case <-sv.cfg.Ctx.Done():
				return
			case s = <-w.Want():
			}
			if have && Same(s, cur) {
				continue
			}
			cur, have = s, true
			if !sv.Claim(id, s, w, quiet) {
				return // the test ended: no other spec comes
			}
			n := holders.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			holders.Add(-1)
			w.Set(s.gen, agentapi.StateExited, "", "")
			sv.Release(id)
			runs.Add(1)
		}
	})
	const goroutines, workloads = 4, 40
	all := make([]spec, workloads)
	for i := range all {
		all[i] = spec{id: fmt.Sprintf("w%02d", i), gen: 1, action: agentapi.ActionRun, gpus: []string{"GPU-a", "GPU-x"}[i%2:]}
	}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range 20 {
				sv.Apply(all)
				sv.Report()
			}
		})
	}
	wg.Wait()
	for runs.Load() < workloads {
		time.Sleep(time.Millisecond)
	}
	if m := most.Load(); m != 1 {
		t.Fatalf("GPU-x was held by %d workloads at once, want 1", m)
	}
}

// signal is a slog handler that closes c at its first record.
type signal struct {
	slog.Handler
	once sync.Once
	c    chan struct{}
}

func (h *signal) Handle(context.Context, slog.Record) error {
	h.once.Do(func() { close(h.c) })
	return nil
}

// TestStrangerStopHoldsItsGPUs: a stop of a workload this runtime never
// started holds what Stranger says (here any GPU, as it names none): a run
// on another GPU waits until that one is gone, and then runs.
func TestStrangerStopHoldsItsGPUs(t *testing.T) {
	waiting := &signal{Handler: quiet.Handler(), c: make(chan struct{})}
	teardown := make(chan struct{})
	sv := newSup(t, func(sv *Supervisor[spec], id string, w *Workload[spec]) {
		s, ok := wait(sv, w.Want())
		if !ok {
			return
		}
		if s.action == agentapi.ActionStop {
			if _, ok := wait(sv, teardown); !ok {
				return
			}
			sv.Gone(id, w, s.gen)
			return
		}
		w.Set(s.gen, agentapi.StateStarting, "", "")
		if sv.Claim(id, s, w, slog.New(waiting)) {
			w.Set(s.gen, agentapi.StateRunning, "", "")
		}
	})
	list := []spec{{id: "old", gen: 4, action: agentapi.ActionStop}, {id: "new", gen: 1, action: agentapi.ActionRun, gpus: []string{"GPU-y"}}}
	sv.Apply(list)
	select {
	case <-waiting.c:
	case <-time.After(30 * time.Second):
		t.Fatal("new never waited for the GPUs old's stop holds")
	}
	if r := sv.Report(); len(r) != 2 || r[0].ID != "new" || r[0].State != agentapi.StateStarting {
		t.Fatalf("while old tears down: %+v, want new starting", r)
	}
	close(teardown)
	for {
		r := sv.Report()
		if r[0].State == agentapi.StateRunning {
			if r[1] != (agentapi.WorkloadReport{ID: "old", Generation: 4, State: agentapi.StateGone}) {
				t.Fatalf("new runs while old reports %+v", r[1])
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
}

// TestClaimGivesWayToANewerSpec: a spec that comes while a run waits for
// its GPUs ends the wait; Claim answers false, claims nothing and leaves
// that spec for the worker's next read.
func TestClaimGivesWayToANewerSpec(t *testing.T) {
	waiting := &signal{Handler: quiet.Handler(), c: make(chan struct{})}
	got := make(chan spec, 1)
	sv := newSup(t, func(sv *Supervisor[spec], id string, w *Workload[spec]) {
		s, ok := wait(sv, w.Want())
		if !ok || id == "old" {
			return
		}
		if sv.Claim(id, s, w, slog.New(waiting)) {
			t.Error("new claimed GPU-y while old's stop holds any GPU")
			return
		}
		if n, ok := wait(sv, w.Want()); ok {
			got <- n
		}
	})
	old := spec{id: "old", gen: 4, action: agentapi.ActionStop}
	sv.Apply([]spec{old, {id: "new", gen: 1, action: agentapi.ActionRun, gpus: []string{"GPU-y"}}})
	select {
	case <-waiting.c:
	case <-time.After(30 * time.Second):
		t.Fatal("new never waited for the GPUs old's stop holds")
	}
	stop := spec{id: "new", gen: 1, action: agentapi.ActionStop}
	sv.Apply([]spec{old, stop})
	select {
	case n := <-got:
		if n.id != stop.id || n.gen != stop.gen || n.action != stop.action {
			t.Fatalf("the worker read %+v after Claim gave way, want %+v", n, stop)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the spec that ended the wait never reached the worker")
	}
	sv.mu.Lock()
	_, held := sv.gpus["new"]
	sv.mu.Unlock()
	if held {
		t.Fatal("new holds GPUs after Claim gave way")
	}
}
