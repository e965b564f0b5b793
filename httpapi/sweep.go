package httpapi

import (
	"context"
	"log/slog"
	"time"

	"gpugraph/store"
)

// SweepOptions configure RunSweeps; a zero ProvisionTimeout is
// store.DefaultProvisionTimeout.
type SweepOptions struct {
	Grace, Interval time.Duration
	// ProvisionTimeout is how long a row may stay deploying before it fails
	// (store.FailStuckDeploying).
	ProvisionTimeout time.Duration
}

// RunSweeps runs the heartbeat sweep (store.Sweep) every interval until
// ctx ends; each round also fails the rows deploying for longer than the
// provision timeout. The database is the only state: every replica may run one.
//
// A sweep right after the agents could not reach the server would take
// every node offline for the server's own outage, not theirs. So a
// sweeper sweeps only once it has been up, and the database reachable,
// for one grace period: when this process starts, and again after any
// failed sweep. Agents retry with a backoff capped at the default grace,
// so by then every live node has reported again.

func RunSweeps(ctx context.Context, st *store.Store, o SweepOptions) {
	if o.ProvisionTimeout <= 0 {
		o.ProvisionTimeout = store.DefaultProvisionTimeout
	}
	runSweeper(ctx, st, o.Grace, o.Interval, o.ProvisionTimeout, time.Now, slog.Default())
}

func runSweeper(ctx context.Context, st *store.Store, grace, interval, provision time.Duration, clock func() time.Time, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	holdUntil := clock().Add(grace)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if clock().Before(holdUntil) {
			continue
		}
		now := store.Now()
		res, err := st.Sweep(ctx, now, grace)
		if err == nil {
			// A deploying row that no agent reported running in time: its
			// hold-off is the sweep's, so an outage of the server (when no
			// agent could report) does not fail them all.
			var failed int64
			failed, err = st.FailStuckDeploying(ctx, now, provision)
			if failed > 0 {
				log.InfoContext(ctx, "provision timeout", "failed", failed, "timeout", provision)
			}
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			log.ErrorContext(ctx, "heartbeat sweep failed; holding off for one grace period", "err", err, "grace", grace)
			holdUntil = clock().Add(grace)
		case res.Changed():
			log.InfoContext(ctx, "heartbeat sweep", "nodesOffline", res.NodesOffline, "interrupted", res.Interrupted,
				"stopped", res.Stopped, "podsDeleted", res.Deleted,
				"markedLeaving", res.Leaving, "nodesRemoved", res.NodesRemoved, "endedNodeRemoved", res.Removed)
		}
	}
}
