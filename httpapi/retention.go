package httpapi

import (
	"context"
	"log/slog"
	"time"

	"gpugraph/store"
)

// DefaultEventRetention is how long the event log keeps an event
// (--event-retention): how far back a subscriber may resume with after.
const DefaultEventRetention = 7 * 24 * time.Hour

// RunEventRetention deletes, every interval until ctx ends, the events
// older than retention (none when retention is 0). Any number of replicas
// may run it: a second delete of the same window deletes nothing.
func RunEventRetention(ctx context.Context, st *store.Store, retention, interval time.Duration) {
	if retention <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := st.DeleteEventsBefore(ctx, store.Now().Add(-retention))
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			slog.ErrorContext(ctx, "event retention sweep failed", "err", err)
		case n > 0:
			slog.InfoContext(ctx, "event retention sweep", "deleted", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
