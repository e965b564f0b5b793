package live

import (
	"context"
	"net/http"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
)

// source is one event log as a stream reads it.
type source[T any] struct {
	topic  store.Topic
	bounds func(context.Context) (oldest, newest int64, err error)
	read   func(ctx context.Context, after int64, limit int) ([]T, error)
	id     func(T) int64
	at     func(T) time.Time
}

// stream is one open subscription, as the credential recheck sees it.
type stream struct {
	caller *auth.Caller
	// may is the stream's gate, asked again of the caller as rechecked.
	may func(*auth.Caller) error
	// revoked receives the end of a stream whose credential no longer
	// stands (buffered: the recheck never waits on a stream).
	revoked chan *apierr.Error
}

// open streams src's events after the event id after (from now when nil)
// to a caller that may (its gate, asked again whenever the caller's
// credential is rechecked). The channel closes when ctx ends or the stream
// does; end, when not nil, is called first with the reason of an end that
// is not ctx's.
func open[T any](f *Feed, ctx context.Context, c *auth.Caller, may func(*auth.Caller) error, src source[T], after *int64, end func(*apierr.Error)) (<-chan T, error) {
	if err := f.admit(c); err != nil {
		return nil, err
	}
	f.startWatch()
	// Listen first, then read: an append committed between the two is
	// either in the read or wakes the loop, never neither.
	wake, stop := f.store.Notifications().Wake(src.topic)
	last, newest, err := start(ctx, src.bounds, after)
	if err != nil {
		stop()
		f.leave(c.KeyID)
		return nil, err
	}
	s := f.register(c, may)
	out := make(chan T, f.limits.Buffer)
	f.Open.Add(1)
	go func() {
		defer func() {
			stop()
			f.unregister(s)
			f.leave(c.KeyID)
			f.Open.Add(-1)
			close(out)
		}()
		if e := pump(f, ctx, s, src, last, newest, wake, out); e != nil && end != nil {
			end(e)
		}
	}()
	return out, nil
}

// start answers the id to read after, checking after against retention,
// and the newest id of the log now.
func start(ctx context.Context, bounds func(context.Context) (int64, int64, error), after *int64) (last, newest int64, err error) {
	oldest, newest, err := bounds(ctx)
	if err != nil {
		return 0, 0, err
	}
	if after == nil {
		return newest, newest, nil
	}
	if *after < 0 {
		return 0, 0, apierr.BadRequest("after must be an event id (0 or more), got %d", *after)
	}
	// after 0 is "from the oldest kept"; any other id must not be older
	// than the event before the oldest kept, or what followed it is gone.
	if *after != 0 && oldest > 0 && *after < oldest-1 {
		return 0, 0, apierr.New(http.StatusGone, CodeEventsExpired,
			"after %d is older than the retention window: the oldest event kept is %d; resume with after: %d (and re-read the state), or omit after", *after, oldest, oldest-1)
	}
	return *after, newest, nil
}

// pump reads the log after last on every wake and hands each event on,
// never blocking on a slow reader: a full buffer ends the stream. Events
// after newest (appended since the stream opened) feed NotifyLag.
func pump[T any](f *Feed, ctx context.Context, s *stream, src source[T], last, newest int64, wake <-chan struct{}, out chan<- T) *apierr.Error {
	// Where to resume is the last event the transport took from out, not
	// the last put in: what still waits in out is lost with the connection.
	handed := newTail(last, f.limits.Buffer+1)
	resume := func() int64 { return handed.back(len(out)) }
	for {
		evs, err := src.read(ctx, last, readBatch)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "the event log did not answer; resume with after: %d", resume())
		}
		for _, ev := range evs {
			if !hand(ctx, f.limits.Grace, out, ev) {
				if ctx.Err() != nil {
					return nil
				}
				f.DroppedLagging.Add(1)
				return apierr.New(http.StatusConflict, CodeLagging,
					"fell %d events behind; resume with after: %d (or the last id received, if lower)", f.limits.Buffer, resume())
			}
			last = src.id(ev)
			handed.push(last)
			f.Delivered.Add(1)
			if last > newest {
				f.NotifyLag.Observe(time.Since(src.at(ev)).Seconds())
			}
		}
		if len(evs) == readBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.closing:
			return apierr.New(http.StatusServiceUnavailable, CodeGoingAway, "the server is shutting down; reconnect, resume with after: %d (or the last id received, if lower)", resume())
		case e := <-s.revoked:
			f.ClosedRevoked.Add(1)
			return e
		case <-wake:
		}
	}
}

// hand puts ev in out, waiting at most grace for room.
func hand[T any](ctx context.Context, grace time.Duration, out chan<- T, ev T) bool {
	select {
	case out <- ev:
		return true
	default:
	}
	t := time.NewTimer(grace)
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

// tail keeps the last ids handed to a subscriber's buffer: enough to say,
// from how many still wait there, which one the transport took last. (The
// one it took last may still be in flight when the connection closes,
// hence "or the last id received, if lower".)
type tail struct {
	start int64
	ids   []int64
	n     int
}

func newTail(start int64, size int) *tail { return &tail{start: start, ids: make([]int64, size)} }

func (t *tail) push(id int64) {
	t.ids[t.n%len(t.ids)] = id
	t.n++
}

// back answers the id handed k before the newest (the newest when k is 0),
// or the stream's start when fewer were handed.
func (t *tail) back(k int) int64 {
	if k >= t.n || k >= len(t.ids) {
		return t.start
	}
	return t.ids[(t.n-1-k)%len(t.ids)]
}
