package middleware

import (
	"container/list"
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"gpugraph/internal/lib/apierr"
)

// budget is a weighted semaphore with a share per key: at most size units
// held at once, at most share of them by one key (docs/decisions/0036-concurrency-and-streams.md). The
// public requests take one unit each, keyed by their credential, so one
// credential can hold only its share and the rest stays for the others;
// the bodies being read take one unit a byte.
//
// A request that does not fit waits, first come first served among those
// that fit: a release hands its units to the oldest waiters that fit at
// once (a waiter of a key at its share is passed over, not waited on), so
// no waiter ever fits while it waits and a newcomer that fits may go in.
type budget struct {
	size, share int64

	mu      sync.Mutex
	used    int64
	byKey   map[string]int64
	waiters list.List // of *waiter, oldest first
}

type waiter struct {
	key   string
	n     int64
	ready chan struct{} // closed when the units are granted
}

// Why acquire refused.
var (
	// errBusy: the whole budget stayed full for the wait.
	errBusy = errors.New("budget: busy")
	// errShare: the key held its whole share for the wait.
	errShare = errors.New("budget: the key holds its share")
)

func newBudget(size, share int64) *budget {
	share = max(1, min(share, size))
	return &budget{size: size, share: share, byKey: map[string]int64{}}
}

// fits reports whether key may take n more units now (b.mu held).
func (b *budget) fits(key string, n int64) bool {
	return b.used+n <= b.size && b.byKey[key]+n <= b.share
}

func (b *budget) take(key string, n int64) {
	b.used += n
	b.byKey[key] += n
}

// acquire takes n units for key, waiting up to wait (or until ctx ends)
// for them. It answers errBusy or errShare when they did not come in
// time, ctx's error when ctx ended first; with no wait, or n over the
// share, it answers at once. Every nil answer is paired with one
// release(key, n).
func (b *budget) acquire(ctx context.Context, key string, n int64, wait time.Duration) error {
	b.mu.Lock()
	if b.fits(key, n) {
		b.take(key, n)
		b.mu.Unlock()
		return nil
	}
	if n > b.share || wait <= 0 {
		err := errBusy
		if b.byKey[key]+n > b.share {
			err = errShare
		}
		b.mu.Unlock()
		return err
	}
	w := &waiter{key: key, n: n, ready: make(chan struct{})}
	elem := b.waiters.PushBack(w)
	b.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-t.C:
		err = errBusy
	case <-ctx.Done():
		err = ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready:
		// Granted as the wait ended: the units are ours. Keep them unless
		// the request itself is over; then hand them on, never leak them.
		if err == errBusy {
			return nil
		}
		b.give(key, n)
		return err
	default:
	}
	b.waiters.Remove(elem)
	if err == errBusy && b.byKey[key]+n > b.share {
		err = errShare
	}
	return err
}

// release gives back n units of key.
func (b *budget) release(key string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.give(key, n)
}

// give returns n units of key and grants them to the oldest waiters that
// fit (b.mu held).
func (b *budget) give(key string, n int64) {
	b.used -= n
	if b.byKey[key] -= n; b.byKey[key] <= 0 {
		delete(b.byKey, key)
	}
	if b.used < 0 {
		panic("budget: released more than was taken")
	}
	for e := b.waiters.Front(); e != nil && b.used < b.size; {
		next := e.Next()
		if w := e.Value.(*waiter); b.fits(w.key, w.n) {
			b.take(w.key, w.n)
			b.waiters.Remove(e)
			close(w.ready)
		}
		e = next
	}
}

// inUse answers the units held in all and by key (for tests and metrics).
func (b *budget) inUse(key string) (all, byKey int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.byKey[key]
}

// refusal is the answer to a request the budget refused: 503 when the
// server is busy, 429 when the caller's credential holds its share (its
// own doing: one of its requests must answer first), 504 when the
// request's own deadline passed while it waited.
func refusal(err error, share int64) *apierr.Error {
	switch {
	case errors.Is(err, errShare):
		e := apierr.New(http.StatusTooManyRequests, rateLimitedCode,
			"this credential holds its share of the server, %d in flight at once; retry when one has answered", share)
		e.RetryAfter = 1
		return e
	case errors.Is(err, context.DeadlineExceeded):
		return apierr.Timeout()
	}
	e := apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, busyMessage)
	e.RetryAfter = 5
	return e
}

const busyMessage = "the server is busy; retry later"
