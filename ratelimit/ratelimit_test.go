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
