package middleware

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// One key holds at most its share; the others still get the rest; a
// release hands the unit to the oldest waiter that fits, passing over a
// waiter of a key still at its share.
func TestBudgetShares(t *testing.T) {
	b := newBudget(4, 2)
	ctx := context.Background()
	for range 2 {
		if err := b.acquire(ctx, "a", 1, 0); err != nil {
			t.Fatalf("a within its share: %v", err)
		}
	}
	if err := b.acquire(ctx, "a", 1, 0); !errors.Is(err, errShare) {
		t.Fatalf("a past its share: %v, want errShare", err)
	}
	if err := b.acquire(ctx, "a", 1, 20*time.Millisecond); !errors.Is(err, errShare) {
		t.Fatalf("a past its share after waiting: %v, want errShare", err)
	}
	for _, k := range []string{"b", "c"} {
		if err := b.acquire(ctx, k, 1, 0); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if err := b.acquire(ctx, "d", 1, 20*time.Millisecond); !errors.Is(err, errBusy) {
		t.Fatalf("d with the budget full: %v, want errBusy", err)
	}
	// a waits (at its share and the budget full), then d: releasing one of
	// b's units must go to d, not to a, which still holds its share.
	got := make(chan string, 2)
	go func() {
		if b.acquire(ctx, "a", 1, 5*time.Second) == nil {
			got <- "a"
		}
	}()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 1 })
	go func() {
		if b.acquire(ctx, "d", 1, 5*time.Second) == nil {
			got <- "d"
		}
	}()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 2 })
	b.release("b", 1)
	if w := <-got; w != "d" {
		t.Fatalf("the freed unit went to %s, want d", w)
	}
	b.release("a", 1)
	if w := <-got; w != "a" {
		t.Fatalf("a's own freed unit went to %s", w)
	}
	for _, k := range []string{"a", "a", "c", "d"} {
		b.release(k, 1)
	}
	if all, _ := b.inUse(""); all != 0 || len(b.byKey) != 0 || b.waiters.Len() != 0 {
		t.Fatalf("after every release: %d used, %v, %d waiters", all, b.byKey, b.waiters.Len())
	}
}

// A waiter whose request ends (deadline or client gone) answers its
// context's error and leaves no unit behind.
func TestBudgetWaiterCancelled(t *testing.T) {
	b := newBudget(1, 1)
	if err := b.acquire(context.Background(), "a", 1, 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := b.acquire(ctx, "b", 1, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a waiter past its deadline: %v", err)
	}
	if got := refusal(context.DeadlineExceeded, 1); got.Status != 504 || got.Code != "TIMEOUT" {
		t.Errorf("the answer to a deadline passed while waiting: %+v, want 504 TIMEOUT", got)
	}
	b.release("a", 1)
	if all, _ := b.inUse(""); all != 0 || b.waiters.Len() != 0 {
		t.Fatalf("%d used, %d waiters", all, b.waiters.Len())
	}
}

// Under concurrent acquires that time out, are cancelled or succeed, the
// budget never lets more than size units or more than share per key in,
// never loses or doubles a unit, and ends empty (run with -race).
func TestBudgetAccountingRace(t *testing.T) {
	const size, share, keys, workers, rounds = 8, 3, 5, 32, 300
	b := newBudget(size, share)
	var inside atomic.Int64
	var perKey [keys]atomic.Int64
	var granted, refused atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range rounds {
				k := rng.IntN(keys)
				key := fmt.Sprint("k", k)
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				switch rng.IntN(3) {
				case 0:
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(200))*time.Microsecond)
				case 1:
					ctx, cancel = context.WithCancel(ctx)
					after := time.Duration(rng.IntN(200)) * time.Microsecond
					go func() { time.Sleep(after); cancel() }()
				}
				err := b.acquire(ctx, key, 1, time.Duration(rng.IntN(300))*time.Microsecond)
				cancel()
				if err != nil {
					refused.Add(1)
					continue
				}
				granted.Add(1)
				if n := inside.Add(1); n > size {
					t.Errorf("%d units held, more than %d", n, size)
				}
				if n := perKey[k].Add(1); n > share {
					t.Errorf("%s holds %d units, more than its share %d", key, n, share)
				}
				time.Sleep(time.Duration(rng.IntN(50)) * time.Microsecond)
				perKey[k].Add(-1)
				inside.Add(-1)
				b.release(key, 1)
			}
		}()
	}
	wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used != 0 || len(b.byKey) != 0 || b.waiters.Len() != 0 {
		t.Fatalf("after %d grants and %d refusals: %d used, %v held, %d waiters", granted.Load(), refused.Load(), b.used, b.byKey, b.waiters.Len())
	}
	if granted.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("%d grants, %d refusals: the test raced nothing", granted.Load(), refused.Load())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("condition never held")
}

// BenchmarkBudget: one acquire and release of a slot, by many goroutines
// of a few keys at once (the price every public request pays).
func BenchmarkBudget(b *testing.B) {
	bud := newBudget(64, 16)
	keys := []string{"cred:a", "cred:b", "cred:c", "cred:d", "cred:e"}
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		key := keys[int(n.Add(1))%len(keys)]
		for pb.Next() {
			if err := bud.acquire(context.Background(), key, 1, time.Second); err != nil {
				b.Error(err)
				return
			}
			bud.release(key, 1)
		}
	})
}
