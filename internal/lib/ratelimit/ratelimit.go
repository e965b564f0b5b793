// Package ratelimit holds each credential to its requests per second, one
// token bucket (golang.org/x/time/rate) per credential and class of work.
//
// The limits are the deployment's: with N replicas live (SetReplicas),
// each process's buckets take its share, rate/N and burst/N, so a client
// whose requests a load balancer spreads over the replicas gets the
// configured limit in all. Buckets are per process and bounded: buckets
// idle for longer than it takes them to refill are dropped (a fresh bucket
// is full, so dropping one changes nothing), and at most MaxKeys are kept.
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

// Share is the part of l that one of n live replicas holds, the rank-th
// of them (0-based, in the order of their ids): Rate/n, and Burst/n with
// the remainder's tokens going one each to the first Burst%n replicas, so
// the shares of all n add up to l exactly; a share's burst is at least 1
// (when Burst < n the replicas together hold n), since a bucket of none
// would refuse everything. n below 1 counts as 1.
func (l Limit) Share(n, rank int) Limit {
	if n <= 1 {
		return l
	}
	burst := l.Burst / n
	if rank >= 0 && rank < l.Burst%n {
		burst++
	}
	return Limit{Rate: l.Rate / float64(n), Burst: max(1, burst)}
}

// MaxKeys bounds the buckets kept per class.
const MaxKeys = 10000

// Limiter keeps the buckets of every credential.
type Limiter struct {
	limits map[Class]Limit // the deployment's, as configured
	now    func() time.Time

	mu       sync.Mutex
	share    map[Class]Limit // this replica's part of limits
	replicas int
	rank     int
	buckets  map[Class]map[string]*bucket
	calls    int
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
	l := &Limiter{limits: map[Class]Limit{}, share: map[Class]Limit{}, now: now, replicas: 1,
		buckets: map[Class]map[string]*bucket{}}
	for c, lim := range limits {
		if lim.Rate > 0 {
			if lim.Burst < 1 {
				lim.Burst = int(math.Ceil(lim.Rate))
			}
			l.limits[c] = lim
			l.share[c] = lim
			l.buckets[c] = map[string]*bucket{}
		}
	}
	return l
}

// SetReplicas makes this process's buckets its share of the limits with n
// replicas live, this one the rank-th of them (Limit.Share), and re-rates
// every bucket already kept (rate.Limiter's SetLimitAt and SetBurstAt): a
// bucket keeps the tokens it holds, at most the new burst, and refills at
// the new rate from now on.
func (l *Limiter) SetReplicas(n, rank int) {
	if l == nil {
		return
	}
	n = max(1, n)
	rank = min(max(0, rank), n-1)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if n == l.replicas && rank == l.rank {
		return
	}
	l.replicas, l.rank = n, rank
	for c, lim := range l.limits {
		share := lim.Share(n, rank)
		l.share[c] = share
		for _, b := range l.buckets[c] {
			b.lim.SetLimitAt(now, rate.Limit(share.Rate))
			b.lim.SetBurstAt(now, share.Burst)
		}
	}
}

// Share answers class c's limit in this process: its part of the
// deployment's (the zero Limit when c is not limited).
func (l *Limiter) Share(c Class) Limit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.share[c]
}

// Tokens answers the tokens key's bucket of class c holds now (a bucket
// not kept is full), for tests.
func (l *Limiter) Tokens(key string, c Class) float64 {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.buckets[c][key]; b != nil {
		return b.lim.TokensAt(now)
	}
	return float64(l.share[c].Burst)
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
	whole, limited := l.limits[c]
	if !limited || n <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.share[c]
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
	if n > whole.Burst {
		// Never possible: say when a full bucket would be there.
		return false, seconds(time.Duration(float64(whole.Burst) / whole.Rate * float64(time.Second)))
	}
	if n > lim.Burst {
		// More than this replica's share of the burst at once (a
		// mutation's restarts), but within the deployment's: taken from a
		// full bucket, which then owes the rest and refills from below
		// zero, so over time the key still gets this replica's rate.
		if have := b.lim.TokensAt(now); have < float64(lim.Burst) {
			return false, seconds(time.Duration((float64(lim.Burst) - have) / lim.Rate * float64(time.Second)))
		}
		for left := n; left > 0; left -= lim.Burst {
			b.lim.ReserveN(now, min(left, lim.Burst))
		}
		return true, 0
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
		lim := l.share[c]
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
