package scheduler

import (
	"context"
	"log/slog"
	"time"

	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
)

// Options configure a Runner.
type Options struct {
	// Interval is how often a pass runs when nothing woke it; zero is
	// DefaultInterval.
	Interval time.Duration
	// PendingTimeout, when positive, fails a row pending for longer
	// (queue-timeout); zero never does.
	PendingTimeout time.Duration
	// MinGap is the least time between two passes, so that a burst of
	// events is one pass, not one each; zero is DefaultMinGap.
	MinGap time.Duration
}

// The runner's defaults.
const (
	DefaultInterval = 5 * time.Second
	DefaultMinGap   = 50 * time.Millisecond
)

// Runner runs passes whenever capacity may have freed and on a timer.
// Capacity frees with a status change (a stop, terminate, failure, expiry
// or removal: the event log's notification, vm_events) or a node's
// (joining, coming back online, a GPU healthy again: node_events): on
// PostgreSQL the broker's LISTEN connection wakes every replica's runner,
// on SQLite the in-process fan-out after commit. A wake is only "look
// again": a pass with nothing pending is one indexed read, and the timer
// covers a notification lost while a listener reconnected.
type Runner struct {
	s   *Service
	o   Options
	log *slog.Logger
	// passed, when set, is told after every pass (tests and benchmarks).
	passed func(Result)
}

// NewRunner is a runner of s's passes with options o.
func NewRunner(s *Service, o Options) *Runner {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MinGap <= 0 {
		o.MinGap = DefaultMinGap
	}
	return &Runner{s: s, o: o, log: slog.Default()}
}

// Compute is the compute service the runner's passes place the queue
// with: the process's one (services.Services.Compute), which the faces
// create, stop and restart with too.
func (r *Runner) Compute() *compute.Service { return r.s.compute }

// OnPass sets a function told every pass's result (for tests and
// benchmarks); call it before Run.
func (r *Runner) OnPass(f func(Result)) { r.passed = f }

// Run passes once at start, then on every wake and every interval, until
// ctx ends.
func (r *Runner) Run(ctx context.Context) {
	wake, stop := r.s.store.Notifications().Wake(store.TopicVMEvents | store.TopicNodeEvents)
	defer stop()
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	for {
		began := time.Now()
		r.once(ctx)
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
		if rest := r.o.MinGap - time.Since(began); rest > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(rest):
			}
		}
	}
}

func (r *Runner) once(ctx context.Context) {
	if r.o.PendingTimeout > 0 {
		n, err := r.s.TimeOut(ctx, store.Now(), r.o.PendingTimeout)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.ErrorContext(ctx, "pending timeout failed", "err", err)
		case n > 0:
			r.log.InfoContext(ctx, "pending timeout", "failed", n, "timeout", r.o.PendingTimeout)
		}
	}
	res, err := r.s.Pass(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		r.log.ErrorContext(ctx, "scheduler pass failed", "err", err)
	case res.Placed > 0:
		r.log.InfoContext(ctx, "scheduler placed pending workloads", "placed", res.Placed, "read", res.Read)
	}
	if r.passed != nil {
		r.passed(res)
	}
}
