package server

import (
	"context"
	"time"

	"gpugraph/store"
)

// RunSweeper runs the heartbeat sweep every interval until ctx ends.
func RunSweeper(ctx context.Context, st *store.Store, grace, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = grace // the sweep itself arrives with the node agent's server side
		}
	}
}
