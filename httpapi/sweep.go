package httpapi

import (
	"context"
	"log/slog"
	"time"

	"gpugraph/store"
)

// RunSweeper runs the heartbeat sweep (store.Sweep) every interval until
// ctx ends. The database is the only state: every replica may run one.
//
// A sweep right after the agents could not reach the server would take
// every node offline for the server's own outage, not theirs. So a
// sweeper sweeps only once it has been up, and the database reachable,
// for one grace period: when this process starts, and again after any
// failed sweep. Agents retry with a backoff capped at the default grace,
// so by then every live node has reported again.
func RunSweeper(ctx context.Context, st *store.Store, grace, interval time.Duration) {
	runSweeper(ctx, st, grace, interval, time.Now, slog.Default())
}

func runSweeper(ctx context.Context, st *store.Store, grace, interval time.Duration, clock func() time.Time, log *slog.Logger) {
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
		res, err := st.Sweep(ctx, store.Now(), grace)
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
