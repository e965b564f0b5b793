package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestBurstThenRate(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(map[Class]Limit{API: {Rate: 2, Burst: 3}}, c.now)
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("k", API, 1); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	if ok, ra := l.Allow("k", API, 1); ok || ra != 1 {
		t.Fatalf("4th: ok %v retryAfter %d, want refused, 1 s", ok, ra)
	}
	if ok, _ := l.Allow("other", API, 1); !ok {
		t.Fatal("another key shares the first's bucket")
	}
	c.add(500 * time.Millisecond) // one token back at 2/s
	if ok, _ := l.Allow("k", API, 1); !ok {
		t.Fatal("refill refused")
	}
	if ok, _ := l.Allow("k", API, 1); ok {
		t.Fatal("second token after one refill allowed")
	}
	// Unlimited classes and n = 0 always pass.
	if ok, _ := l.Allow("k", Restart, 100); !ok {
		t.Fatal("unlimited class refused")
	}
}

func TestAllowNAndRetryAfter(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(map[Class]Limit{Restart: {Rate: 0.5, Burst: 4}}, c.now)
	if ok, _ := l.Allow("k", Restart, 3); !ok {
		t.Fatal("3 of 4 refused")
	}
	// 1 left; 3 need 2 more tokens at 0.5/s = 4 s; a refusal takes none.
	if ok, ra := l.Allow("k", Restart, 3); ok || ra != 4 {
		t.Fatalf("3 more: ok %v retryAfter %d, want refused, 4", ok, ra)
	}
	if ok, _ := l.Allow("k", Restart, 1); !ok {
		t.Fatal("the token left was taken by a refusal")
	}
	if ok, ra := l.Allow("k", Restart, 5); ok || ra != 8 {
		t.Fatalf("more than the burst: ok %v retryAfter %d, want refused, 8", ok, ra)
	}
}

func TestStateIsBounded(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(map[Class]Limit{API: {Rate: 10, Burst: 10}}, c.now)
	for i := 0; i < MaxKeys+50; i++ {
		l.Allow(fmt.Sprint("key-", i), API, 1)
	}
	if n := l.Len(API); n != MaxKeys {
		t.Fatalf("%d buckets, want at most %d", n, MaxKeys)
	}
	// Idle past a refill (1 s + 1 s): dropped at the next sweep.
	c.add(3 * time.Second)
	for i := 0; i < 1024; i++ {
		l.Allow("busy", API, 0)
		l.Allow("busy", API, 1)
	}
	if n := l.Len(API); n != 1 {
		t.Fatalf("%d buckets after the idle ones refilled, want 1", n)
	}
}

func TestConcurrentAllow(t *testing.T) {
	l := New(map[Class]Limit{API: {Rate: 1, Burst: 100}}, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if ok, _ := l.Allow("k", API, 1); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed < 100 || allowed > 101 {
		t.Fatalf("%d of 400 allowed with burst 100", allowed)
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct {
		lim     Limit
		n       int
		want    []Limit // by rank
		comment string
	}{
		{Limit{50, 100}, 1, []Limit{{50, 100}}, "one replica holds it all"},
		{Limit{50, 100}, 0, []Limit{{50, 100}}, "no count yet is one"},
		{Limit{50, 100}, 2, []Limit{{25, 50}, {25, 50}}, "halves"},
		{Limit{1, 10}, 3, []Limit{{1.0 / 3, 4}, {1.0 / 3, 3}, {1.0 / 3, 3}}, "the remainder's token to the first"},
		{Limit{5, 2}, 3, []Limit{{5.0 / 3, 1}, {5.0 / 3, 1}, {5.0 / 3, 1}}, "never a burst of 0"},
	} {
		sum := 0
		for rank, want := range tc.want {
			got := tc.lim.Share(tc.n, rank)
			if got != want {
				t.Errorf("%s: %+v.Share(%d, %d) = %+v, want %+v", tc.comment, tc.lim, tc.n, rank, got, want)
			}
			sum += got.Burst
		}
		if tc.lim.Burst >= tc.n && sum != tc.lim.Burst {
			t.Errorf("%s: the shares' bursts add up to %d, want %d", tc.comment, sum, tc.lim.Burst)
		}
	}
}

// A replica joining or leaving re-rates the buckets already kept: each
// keeps its tokens up to the new burst and refills at the new rate.
func TestSetReplicasReRates(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(map[Class]Limit{API: {Rate: 10, Burst: 10}, Ingest: {Rate: 4, Burst: 8}}, c.now)
	for i := 0; i < 4; i++ {
		if ok, _ := l.Allow("k", API, 1); !ok {
			t.Fatalf("request %d refused", i+1)
		}
	}
	if got := l.Tokens("k", API); got != 6 {
		t.Fatalf("%v tokens after 4 of 10, want 6", got)
	}

	l.SetReplicas(2, 0)
	if got := l.Share(API); got != (Limit{Rate: 5, Burst: 5}) {
		t.Fatalf("API share of 2 replicas: %+v", got)
	}
	if got := l.Share(Ingest); got != (Limit{Rate: 2, Burst: 4}) {
		t.Fatalf("ingest share of 2 replicas: %+v", got)
	}
	if got := l.Tokens("k", API); got != 5 {
		t.Fatalf("%v tokens after the burst became 5, want 5", got)
	}
	for i := 0; i < 5; i++ {
		if ok, _ := l.Allow("k", API, 1); !ok {
			t.Fatalf("token %d of 5 refused", i+1)
		}
	}
	if ok, ra := l.Allow("k", API, 1); ok || ra != 1 {
		t.Fatalf("6th: ok %v retryAfter %d, want refused, 1 s", ok, ra)
	}
	// A bucket made after the change is the share, full: 5, not 10.
	if got := l.Tokens("new", API); got != 5 {
		t.Fatalf("a new key holds %v, want 5", got)
	}
	taken := 0
	for i := 0; i < 10; i++ {
		if ok, _ := l.Allow("new", API, 1); ok {
			taken++
		}
	}
	if taken != 5 {
		t.Fatalf("a new key took %d of 10, want 5", taken)
	}
	// At 5/s, 0.4 s is 2 tokens.
	c.add(400 * time.Millisecond)
	if got := l.Tokens("k", API); got != 2 {
		t.Fatalf("%v tokens 0.4 s later at 5/s, want 2", got)
	}

	// Back to one replica: the 2 tokens held stay, refilling at 10/s up to 10.
	l.SetReplicas(1, 0)
	if got := l.Tokens("k", API); got != 2 {
		t.Fatalf("%v tokens as the other replica left, want 2 (kept)", got)
	}
	c.add(500 * time.Millisecond)
	if got := l.Tokens("k", API); got != 7 {
		t.Fatalf("%v tokens 0.5 s later at 10/s, want 7", got)
	}
	c.add(time.Second)
	if got := l.Tokens("k", API); got != 10 {
		t.Fatalf("%v tokens once refilled, want 10", got)
	}
	if got := l.Share(API); got != (Limit{Rate: 10, Burst: 10}) {
		t.Fatalf("API share of 1 replica: %+v", got)
	}
}

// An operation of more tokens than a replica's share of the burst (ten
// restarts in one mutation, on one of two replicas holding 5 each) but no
// more than the whole burst runs on a full bucket, which then owes the
// rest: over time the key gets no more than the replica's rate.
func TestOverShareFromFullBucket(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(map[Class]Limit{Restart: {Rate: 1, Burst: 10}}, c.now)
	l.SetReplicas(2, 1)
	if ok, _ := l.Allow("k", Restart, 8); !ok {
		t.Fatal("8 restarts from a full bucket of 5 (of 10 in all) refused")
	}
	if got := l.Tokens("k", Restart); got != -3 {
		t.Fatalf("%v tokens after 8 of 5, want -3", got)
	}
	// One more needs 4 tokens at 0.5/s: 8 s.
	if ok, ra := l.Allow("k", Restart, 1); ok || ra != 8 {
		t.Fatalf("one more: ok %v retryAfter %d, want refused, 8", ok, ra)
	}
	// More than the whole burst never runs: a full bucket of 10 at 1/s.
	if ok, ra := l.Allow("k", Restart, 11); ok || ra != 10 {
		t.Fatalf("11: ok %v retryAfter %d, want refused, 10", ok, ra)
	}
	// 6 s later it holds 0; 6 need the bucket full (5 at 0.5/s: 10 s).
	c.add(6 * time.Second)
	if ok, ra := l.Allow("k", Restart, 6); ok || ra != 10 {
		t.Fatalf("6 from an empty bucket: ok %v retryAfter %d, want refused, 10", ok, ra)
	}
	if got := l.Tokens("k", Restart); got != 0 {
		t.Fatalf("%v tokens after a refusal, want 0 (a refusal takes none)", got)
	}
	c.add(10 * time.Second)
	if ok, _ := l.Allow("k", Restart, 6); !ok {
		t.Fatal("6 from a full bucket refused")
	}
}
