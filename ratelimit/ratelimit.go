// Package ratelimit holds each credential to its requests per second, one
// token bucket (golang.org/x/time/rate) per credential and class of work.
// State is per process and bounded: buckets idle for longer than it takes
// them to refill are dropped (a fresh bucket is full, so dropping one
// changes nothing), and at most MaxKeys are kept.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Class is a kind of work with its own budget.
type Class string

// The classes: every API request, and on top of it each restart (a REST
// restart, each restartVm of a mutation) and each metric ingestion.
const (
	API     Class = "api"
	Restart Class = "restart"
	Ingest  Class = "ingest"
)

// Classes lists every class (the label values of the refusal metric).
var Classes = []Class{API, Restart, Ingest}

// Limit is one class's budget per credential: Rate tokens a second, at
// most Burst at once. A zero Rate means no limit.
type Limit struct {
	Rate  float64
	Burst int
}

// MaxKeys bounds the buckets kept per class.
const MaxKeys = 10000

// Limiter keeps the buckets of every credential.
type Limiter struct {
	limits map[Class]Limit
	now    func() time.Time

	mu      sync.Mutex
	buckets map[Class]map[string]*bucket
	calls   int
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// New makes a Limiter with limits per class; now is the clock (time.Now
// when nil).
func New(limits map[Class]Limit, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	l := &Limiter{limits: map[Class]Limit{}, now: now, buckets: map[Class]map[string]*bucket{}}
	for c, lim := range limits {
		if lim.Rate > 0 {
			if lim.Burst < 1 {
				lim.Burst = int(math.Ceil(lim.Rate))
			}
			l.limits[c] = lim
			l.buckets[c] = map[string]*bucket{}
		}
	}
	return l
}

// Enabled reports whether class c has a limit.
func (l *Limiter) Enabled(c Class) bool {
	if l == nil {
		return false
	}
	_, ok := l.limits[c]
	return ok
}

// Allow takes n tokens of class c from key's bucket. When it cannot, it
// takes none and answers how long until n would be there (whole seconds,
// at least 1, for Retry-After).
func (l *Limiter) Allow(key string, c Class, n int) (ok bool, retryAfter int) {
	if l == nil {
		return true, 0
	}
	lim, limited := l.limits[c]
	if !limited || n <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.calls%1024 == 0 {
		l.evictIdle(now)
	}
	bs := l.buckets[c]
	b := bs[key]
	if b == nil {
		if len(bs) >= MaxKeys {
			l.evictIdle(now)
			if len(bs) >= MaxKeys {
				l.evictOldest(bs)
			}
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(lim.Rate), lim.Burst)}
		bs[key] = b
	}
	b.seen = now
	if n > lim.Burst {
		// Never possible: say when a full bucket would be there.
		return false, seconds(time.Duration(float64(lim.Burst) / lim.Rate * float64(time.Second)))
	}
	r := b.lim.ReserveN(now, n)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, seconds(d)
	}
	return true, 0
}

func seconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}

// evictIdle drops the buckets that have refilled since they were last used.
func (l *Limiter) evictIdle(now time.Time) {
	for c, bs := range l.buckets {
		lim := l.limits[c]
		full := time.Duration(float64(lim.Burst)/lim.Rate*float64(time.Second)) + time.Second
		for k, b := range bs {
			if now.Sub(b.seen) > full {
				delete(bs, k)
			}
		}
	}
}

func (l *Limiter) evictOldest(bs map[string]*bucket) {
	var oldest string
	var at time.Time
	for k, b := range bs {
		if oldest == "" || b.seen.Before(at) {
			oldest, at = k, b.seen
		}
	}
	delete(bs, oldest)
}

// Len answers how many buckets class c keeps (for tests and metrics).
func (l *Limiter) Len(c Class) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets[c])
}
