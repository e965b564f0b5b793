// Package live streams the event log to subscribers: GraphQL's
// subscription vmEvents reads it through a Feed. The log is the source of
// truth; the store's notifier only says when to read it again, so a
// subscriber reads every event once, in id order, from its last delivered
// id: no gap, no duplicate, across replicas and across a resume (after).
package live

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/models"
	"gpugraph/store"
)

// The codes a stream ends with (docs/contract.md, "Live updates").
const (
	// CodeLagging: the subscriber fell a whole buffer behind; it resumes
	// with after = the last id it received. WebSocket close code 4409.
	CodeLagging = "SUBSCRIBER_LAGGING"
	// CodeGoingAway: the server is shutting down; reconnect elsewhere with
	// after. WebSocket close code 1001.
	CodeGoingAway = "GOING_AWAY"
	// CodeEventsExpired: after names an event older than the retention window.
	CodeEventsExpired = "EVENTS_EXPIRED"
	// CodeTooManySubscriptions: the key holds PerKey streams already.
	CodeTooManySubscriptions = "TOO_MANY_SUBSCRIPTIONS"
)

// WebSocket close codes of a stream's end.
const (
	CloseLagging   = 4409
	CloseGoingAway = 1001
)

// Limits bound what one subscriber may hold.
type Limits struct {
	// Buffer is how many events may wait for a subscriber before it is
	// dropped as lagging (default 256).
	Buffer int
	// PerKey caps the open subscriptions of one API key (default 100).
	PerKey int
	// Grace is how long a full buffer may stay full before its subscriber
	// is dropped (default 2s): a burst (a sweep that interrupts a whole
	// node) fills a buffer of a fast reader too, for a moment. Waiting
	// blocks this subscriber's reader only, never another's.
	Grace time.Duration
}

const (
	defaultBuffer = 256
	defaultPerKey = 100
	readBatch     = 500
	maxIDs        = 1000
)

// Feed serves every subscription of one process.
type Feed struct {
	store  *store.Store
	limits Limits

	mu      sync.Mutex
	perKey  map[string]int
	closing chan struct{}
	closed  bool

	// Counters for /metrics.
	Open, Delivered, DroppedLagging atomic.Int64
}

// New is the feed of st.
func New(st *store.Store, l Limits) *Feed {
	if l.Buffer <= 0 {
		l.Buffer = defaultBuffer
	}
	if l.PerKey <= 0 {
		l.PerKey = defaultPerKey
	}
	if l.Grace <= 0 {
		l.Grace = 2 * time.Second
	}
	return &Feed{store: st, limits: l, perKey: map[string]int{}, closing: make(chan struct{})}
}

// Shutdown ends every stream with CodeGoingAway (and refuses new ones).
func (f *Feed) Shutdown() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.closing)
	}
}

// VMEvents streams the events of the caller's organization (of the VMs
// ids only, when given) after the event id after, or from now when after
// is nil. The channel closes when ctx ends or the stream does; end, when
// not nil, is called first with the reason of an end that is not ctx's.
func (f *Feed) VMEvents(ctx context.Context, c *auth.Caller, ids []string, after *int64, end func(*apierr.Error)) (<-chan *models.VMEvent, error) {
	if len(ids) > maxIDs {
		return nil, apierr.BadRequest("ids lists %d VMs; a subscription follows at most %d (or omit ids for all of them)", len(ids), maxIDs)
	}
	if err := f.admit(c.KeyID); err != nil {
		return nil, err
	}
	// Listen first, then read: an append committed between the two is
	// either in the read or wakes the loop, never neither.
	wake, stop := f.store.Notifications().Wake()
	last, err := f.start(ctx, after)
	if err != nil {
		stop()
		f.leave(c.KeyID)
		return nil, err
	}
	out := make(chan *models.VMEvent, f.limits.Buffer)
	f.Open.Add(1)
	go func() {
		defer func() {
			stop()
			f.leave(c.KeyID)
			f.Open.Add(-1)
			close(out)
		}()
		if e := f.pump(ctx, c.OrganizationID, ids, last, wake, out); e != nil && end != nil {
			end(e)
		}
	}()
	return out, nil
}

// start answers the id to read after, checking after against retention.
func (f *Feed) start(ctx context.Context, after *int64) (int64, error) {
	oldest, newest, err := f.store.EventLogBounds(ctx)
	if err != nil {
		return 0, err
	}
	if after == nil {
		return newest, nil
	}
	if *after < 0 {
		return 0, apierr.BadRequest("after must be an event id (0 or more), got %d", *after)
	}
	// after 0 is "from the oldest kept"; any other id must not be older
	// than the event before the oldest kept, or what followed it is gone.
	if *after != 0 && oldest > 0 && *after < oldest-1 {
		return 0, apierr.New(http.StatusGone, CodeEventsExpired,
			"after %d is older than the retention window: the oldest event kept is %d; resume with after: %d (and re-read the state), or omit after", *after, oldest, oldest-1)
	}
	return *after, nil
}

// pump reads the log after last on every wake and hands each event on,
// never blocking on a slow reader: a full buffer ends the stream.
func (f *Feed) pump(ctx context.Context, orgID string, ids []string, last int64, wake <-chan struct{}, out chan<- *models.VMEvent) *apierr.Error {
	for {
		evs, err := f.store.EventsAfter(ctx, orgID, ids, last, readBatch)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "the event log did not answer; resume with after: %d", last)
		}
		for _, ev := range evs {
			if !f.hand(ctx, out, ev) {
				if ctx.Err() != nil {
					return nil
				}
				f.DroppedLagging.Add(1)
				return apierr.New(http.StatusConflict, CodeLagging,
					"the subscriber fell %d events behind and was dropped; resume with after: %d", f.limits.Buffer, last)
			}
			last = ev.ID
			f.Delivered.Add(1)
		}
		if len(evs) == readBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.closing:
			return apierr.New(http.StatusServiceUnavailable, CodeGoingAway, "the server is shutting down; reconnect and resume with after: %d", last)
		case <-wake:
		}
	}
}

// hand puts ev in out, waiting at most Grace for room.
func (f *Feed) hand(ctx context.Context, out chan<- *models.VMEvent, ev *models.VMEvent) bool {
	select {
	case out <- ev:
		return true
	default:
	}
	t := time.NewTimer(f.limits.Grace)
	defer t.Stop()
	select {
	case out <- ev:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (f *Feed) admit(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return apierr.New(http.StatusServiceUnavailable, CodeGoingAway, "the server is shutting down; reconnect elsewhere")
	}
	if f.perKey[key] >= f.limits.PerKey {
		return apierr.New(http.StatusTooManyRequests, CodeTooManySubscriptions,
			"this API key holds %d open subscriptions already, the most one key may hold", f.limits.PerKey)
	}
	f.perKey[key]++
	return nil
}

func (f *Feed) leave(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.perKey[key]--; f.perKey[key] <= 0 {
		delete(f.perKey, key)
	}
}

type closerKey struct{}

// WithCloser records in ctx how to close the connection a stream runs on
// (a WebSocket's close with code and reason); the transport sets it.
func WithCloser(ctx context.Context, close func(code int, reason string)) context.Context {
	return context.WithValue(ctx, closerKey{}, close)
}

// CloseConn closes the connection of ctx's stream with code, when it runs
// on one that closes (a WebSocket); SSE streams end with their error event.
func CloseConn(ctx context.Context, code int, reason string) {
	if close, ok := ctx.Value(closerKey{}).(func(int, string)); ok {
		close(code, reason)
	}
}

// CloseCode is the WebSocket close code of a stream's end.
func CloseCode(e *apierr.Error) int {
	if e.Code == CodeGoingAway {
		return CloseGoingAway
	}
	return CloseLagging
}

// CloseReason is the WebSocket close reason of a stream's end: its code
// and message ("SUBSCRIBER_LAGGING: … resume with after: 41"), cut to the
// 123 bytes a close frame carries.
func CloseReason(e *apierr.Error) string {
	r := e.Code + ": " + e.Message
	if len(r) > 123 {
		r = r[:123]
	}
	return r
}
