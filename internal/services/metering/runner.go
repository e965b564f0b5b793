package metering

import (
	"context"
	"log/slog"
	"time"
)

// DefaultInterval is how often a runner passes (--metering-interval).
const DefaultInterval = time.Minute

// Runner runs a metering pass every interval until its context ends. The
// database is the only state: every replica may run one, and a pass that
// fails (or a process killed in one) leaves what the next pass closes.
type Runner struct {
	s        *Service
	interval time.Duration
	log      *slog.Logger
}

// NewRunner is a runner of s's passes every interval (DefaultInterval
// when not positive), which is s's metering period from then on.
func NewRunner(s *Service, interval time.Duration) *Runner {
	if interval <= 0 {
		interval = DefaultInterval
	}
	s.Interval = interval
	return &Runner{s: s, interval: interval, log: slog.Default()}
}

// Run passes every interval until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res, err := r.s.Pass(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			r.log.ErrorContext(ctx, "metering pass failed; the next one closes what it left", "err", err)
		case res.Exhausted > 0:
			r.log.InfoContext(ctx, "metering pass: balances ran out", "organizations", res.Exhausted, "stopped", res.Stopped)
		case res.Records > 0 || res.Cursors > 0:
			r.log.DebugContext(ctx, "metering pass", "through", res.Through, "workloads", res.Workloads,
				"records", res.Records, "debits", res.Debits, "newWorkloads", res.Cursors, "lowBalance", res.LowBalance)
		}
	}
}

// Service is the service the runner passes with: the process's one
// (services.Services.Metering), which the faces read balances from too.
func (r *Runner) Service() *Service { return r.s }

// Interval is how often the runner passes.
func (r *Runner) Interval() time.Duration { return r.interval }
