package live

import (
	"context"
	"log/slog"
	"time"

	"gpugraph/internal/store"
)

// DefaultEventRetention is how long the event log keeps an event
// (--event-retention): how far back a subscriber may resume with after.
const DefaultEventRetention = 7 * 24 * time.Hour

// Retention is the event log's retention runner: every interval it deletes
// the events older than its retention. Any number of replicas may run one:
// a second delete of the same window deletes nothing.
type Retention struct {
	store               *store.Store
	retention, interval time.Duration
}

// NewRetention is a runner that keeps st's events for retention (none is
// deleted when retention is 0), checking every interval.
func NewRetention(st *store.Store, retention, interval time.Duration) *Retention {
	return &Retention{store: st, retention: retention, interval: interval}
}

// Run deletes the expired events at once, then every interval, until ctx
// ends; it returns at once when nothing expires.
func (r *Retention) Run(ctx context.Context) {
	if r.retention <= 0 {
		return
	}
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		n, err := r.store.DeleteEventsBefore(ctx, store.Now().Add(-r.retention))
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			slog.ErrorContext(ctx, "event retention sweep failed", "err", err)
		case n > 0:
			slog.InfoContext(ctx, "event retention sweep", "deleted", n, "retention", r.retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
