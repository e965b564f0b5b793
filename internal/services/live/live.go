// Package live streams the event logs to subscribers: GraphQL's
// subscriptions vmEvents, nodeEvents and billingEvents (an organization's
// billing events, through the metering service) read them through a Feed. A log is
// the source of truth; the store's notifier only says when to read it
// again, so a subscriber reads every event once, in id order, from its last
// delivered id: no gap, no duplicate, across replicas and across a resume
// (after). The feed also closes the streams of a key revoked or an
// organization suspended after they opened (recheck.go).
package live

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
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
	// CodeCredentialRevoked: the stream's credential (API key, access
	// token) was revoked or expired.
	// WebSocket close code 4403, as an organization suspended or deleted
	// (whose codes are auth's ORGANIZATION_SUSPENDED, ORGANIZATION_DELETED)
	// or a permission withdrawn (FORBIDDEN).
	CodeCredentialRevoked = "CREDENTIAL_REVOKED"
)

// WebSocket close codes of a stream's end.
const (
	CloseLagging   = 4409
	CloseGoingAway = 1001
	CloseRevoked   = 4403
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
	// Recheck is how often open streams' keys are checked again even
	// without a credentials notification (DefaultRecheck): a key revoked
	// by a process that did not notify still closes its streams within it.
	Recheck time.Duration
}

// DefaultRecheck is Limits.Recheck's default (--stream-recheck).
const DefaultRecheck = 30 * time.Second

// MaxIDs is how many ids one subscription may follow (the GraphQL face
// refuses a longer list before the operation runs).
const MaxIDs = maxIDs

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
	streams map[*stream]struct{}
	closing chan struct{}
	closed  bool
	watch   sync.Once
	// credsChangedAt is when the recheck loop last heard of a change of
	// credentials; recheckNow asks it for a round out of turn.
	credsChangedAt time.Time
	recheckNow     chan struct{}

	// Counters for /metrics.
	Open, Delivered, DroppedLagging, ClosedRevoked atomic.Int64
	// NotifyLag is the seconds from an event's time (stamped in the
	// transaction that commits it) to its hand-off into a subscriber's
	// buffer, for events appended after the subscription opened (a
	// replay's would measure the replay, not the notification).
	NotifyLag prometheus.Histogram
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
	if l.Recheck <= 0 {
		l.Recheck = DefaultRecheck
	}
	return &Feed{store: st, limits: l,
		perKey: map[string]int{}, streams: map[*stream]struct{}{}, closing: make(chan struct{}), recheckNow: make(chan struct{}, 1),
		NotifyLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gpugraph_subscription_notify_lag_seconds",
			Help:    "Seconds from an event's commit (its time, stamped in the committing transaction) to its hand-off into a subscriber's buffer.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		})}
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

// admit counts a stream against its caller's credential (c.KeyID: an
// access token's is its application's, all its tokens together).
func (f *Feed) admit(c *auth.Caller) error {
	key := c.KeyID
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return apierr.New(http.StatusServiceUnavailable, CodeGoingAway, "the server is shutting down; reconnect elsewhere")
	}
	if f.perKey[key] >= f.limits.PerKey {
		holder, one := "this "+string(c.CredentialKind()), "key"
		if c.CredentialKind() == auth.AccessToken {
			holder, one = "the application of this access token", "application"
		}
		return apierr.New(http.StatusTooManyRequests, CodeTooManySubscriptions,
			"%s holds %d open subscriptions already, the most one %s may hold", holder, f.limits.PerKey, one)
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

// WithCloser records in ctx how to end the connection a stream runs on
// with code and reason (a WebSocket's close, an SSE stream's last event);
// the transport sets it.
func WithCloser(ctx context.Context, close func(code int, reason string, e *apierr.Error)) context.Context {
	return context.WithValue(ctx, closerKey{}, close)
}

// CloseConn ends the connection of ctx's stream with e: on a WebSocket, the
// close code and reason of e; on SSE, a last event carrying e.
func CloseConn(ctx context.Context, e *apierr.Error) {
	if close, ok := ctx.Value(closerKey{}).(func(int, string, *apierr.Error)); ok {
		close(CloseCode(e), CloseReason(e), e)
	}
}

// CloseCode is the WebSocket close code of a stream's end.
func CloseCode(e *apierr.Error) int {
	switch {
	case e.Code == CodeGoingAway:
		return CloseGoingAway
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return CloseRevoked
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
