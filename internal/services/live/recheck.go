package live

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
)

// A stream's key is checked once, when it subscribes; a key revoked or an
// organization suspended afterwards must still close it. One goroutine per
// feed checks every open stream's key again, once per distinct key, when
// the store says credentials changed (store.TopicCredentials: another
// replica's change too) and every Limits.Recheck, for a change made
// without a notification.

// register adds a stream to those the loop checks. A change notified
// after its key was read may have been checked before it was here: the
// loop then runs a round for it.
func (f *Feed) register(c *auth.Caller, may func(*auth.Caller) error) *stream {
	s := &stream{caller: c, may: may, revoked: make(chan *apierr.Error, 1)}
	f.mu.Lock()
	f.streams[s] = struct{}{}
	missed := f.credsChangedAt.After(c.LookedUpAt)
	f.mu.Unlock()
	if missed {
		select {
		case f.recheckNow <- struct{}{}:
		default:
		}
	}
	return s
}

func (f *Feed) unregister(s *stream) {
	f.mu.Lock()
	delete(f.streams, s)
	f.mu.Unlock()
}

// startWatch starts the recheck loop with the feed's first stream; its
// wake is registered before the stream reads anything, so no notification
// committed after the stream's own key lookup is missed.
func (f *Feed) startWatch() {
	f.watch.Do(func() {
		wake, stop := f.store.Notifications().Wake(store.TopicCredentials)
		go func() {
			defer stop()
			t := time.NewTicker(f.limits.Recheck)
			defer t.Stop()
			for {
				select {
				case <-f.closing:
					return
				case <-wake:
					f.mu.Lock()
					f.credsChangedAt = time.Now()
					f.mu.Unlock()
				case <-t.C:
				case <-f.recheckNow:
				}
				f.recheck()
			}
		}()
	})
}

// recheck ends the open streams whose key no longer stands.
func (f *Feed) recheck() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	byKey := map[string][]*stream{}
	f.mu.Lock()
	for s := range f.streams {
		byKey[s.caller.CredentialKey()] = append(byKey[s.caller.CredentialKey()], s)
	}
	f.mu.Unlock()
	for _, ss := range byKey {
		c, err := auth.Recheck(ctx, ss[0].caller)
		for _, s := range ss {
			e := refusal(s.caller, c, err, s.may)
			if e == nil {
				continue
			}
			select {
			case s.revoked <- e:
			default:
			}
		}
		if err != nil {
			if _, ok := apierr.As(err); !ok {
				// The database did not answer: the streams stay, and the
				// next round asks again.
				slog.Warn("live: credential recheck failed", "err", err)
			}
		}
	}
}

// refusal is the end of a stream opened by was whose recheck answered c,
// err: nil while the credential stands and its gate (may) still lets it
// through, or when the check itself failed. Both name the kind of
// credential the stream was opened with. A gate that now answers anything
// but a 401 (an operator's key that lost nodes.admin, to which another
// organization's billing events are now missing) ends the stream as a
// permission withdrawn: 403.
func refusal(was, c *auth.Caller, err error, may func(*auth.Caller) error) *apierr.Error {
	if err != nil {
		e, ok := apierr.As(err)
		switch {
		case !ok:
			return nil
		case e.Status == http.StatusUnauthorized:
			return apierr.New(http.StatusUnauthorized, CodeCredentialRevoked,
				"the %s of this stream was revoked or expired; the stream is closed", was.CredentialKind())
		case e.Status == http.StatusForbidden:
			return e
		}
		return nil
	}
	if err := may(c); err != nil {
		e, _ := apierr.As(err)
		if e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden {
			return apierr.New(http.StatusForbidden, apierr.Forbidden, "this %s may no longer read this stream: %s", c.CredentialKind(), e.Message)
		}
		return e
	}
	return nil
}
