package sweep

import (
	"context"
	"log/slog"
	"time"

	"gpugraph/internal/store"
)

// Options configure a Runner; a zero ProvisionTimeout is
// DefaultProvisionTimeout, a zero TeardownGrace DefaultTeardownGrace.
type Options struct {
	// Grace is how long a node may stay silent before it goes offline,
	// and how long a runner holds off (Runner).
	Grace time.Duration
	// Interval is how often it sweeps.
	Interval time.Duration
	// ProvisionTimeout is how long a row may stay deploying before it fails
	// (Service.FailStuckDeploying).
	ProvisionTimeout time.Duration
	// TeardownGrace is how long a teardown on a node that is not online
	// waits for the node before it is given up on
	// (Service.ExpireTeardowns).
	TeardownGrace time.Duration
}

// Runner runs the heartbeat sweep (Service.Sweep) every interval until its
// context ends; each round also fails the rows deploying for longer than
// the provision timeout. The database is the only state: every replica
// may run one.
//
// A sweep right after the agents could not reach the server would take
// every node offline for the server's own outage, not theirs. So a runner
// sweeps only once it has been up, and the database reachable, for one
// grace period: when it starts, and again after any failed sweep. Agents
// retry with a backoff capped at the default grace, so by then every live
// node has reported again.
type Runner struct {
	sweeps *Service
	o      Options
	clock  func() time.Time // the hold-off's clock
	log    *slog.Logger
}

// NewRunner is a runner of s's sweeps with options o.
func NewRunner(s *Service, o Options) *Runner {
	if o.ProvisionTimeout <= 0 {
		o.ProvisionTimeout = DefaultProvisionTimeout
	}
	if o.TeardownGrace <= 0 {
		o.TeardownGrace = DefaultTeardownGrace
	}
	return &Runner{sweeps: s, o: o, clock: time.Now, log: slog.Default()}
}

// Run sweeps every interval, after the hold-off, until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	holdUntil := r.clock().Add(r.o.Grace)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if r.clock().Before(holdUntil) {
			continue
		}
		now := store.Now()
		res, err := r.sweeps.Sweep(ctx, now, r.o.Grace)
		if err == nil {
			// A deploying row that no agent reported running in time: its
			// hold-off is the sweep's, so an outage of the server (when no
			// agent could report) does not fail them all.
			var failed int64
			failed, err = r.sweeps.FailStuckDeploying(ctx, now, r.o.ProvisionTimeout)
			if failed > 0 {
				r.log.InfoContext(ctx, "provision timeout", "failed", failed, "timeout", r.o.ProvisionTimeout)
			}
		}
		if err == nil {
			var freed int64
			freed, err = r.sweeps.ExpireTeardowns(ctx, now, r.o.TeardownGrace)
			if freed > 0 {
				r.log.InfoContext(ctx, "teardown grace passed on nodes not online", "freed", freed, "grace", r.o.TeardownGrace)
			}
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			r.log.ErrorContext(ctx, "heartbeat sweep failed; holding off for one grace period", "err", err, "grace", r.o.Grace)
			holdUntil = r.clock().Add(r.o.Grace)
		case res.Changed():
			r.log.InfoContext(ctx, "heartbeat sweep", "nodesOffline", res.NodesOffline, "interrupted", res.Interrupted,
				"stopped", res.Stopped, "podsDeleted", res.Deleted,
				"markedLeaving", res.Leaving, "nodesRemoved", res.NodesRemoved, "endedNodeRemoved", res.Removed)
		}
	}
}
