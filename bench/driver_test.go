package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestDriveRunsEachRequestOnceWithBoundedConcurrency(t *testing.T) {
	var inFlight, peak atomic.Int64
	seen := make([]atomic.Int64, 100)
	l := Drive(context.Background(), 4, 100, func(ctx context.Context, i int) error {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		seen[i].Add(1)
		time.Sleep(time.Millisecond)
		inFlight.Add(-1)
		if i%10 == 0 {
			return errors.New("boom")
		}
		return nil
	})
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("request %d ran %d times", i, seen[i].Load())
		}
	}
	if peak.Load() > 4 || l.Requests != 100 || l.Errors != 10 || l.FirstErr == nil || len(l.Latencies) != 100 {
		t.Fatalf("peak %d, %+v", peak.Load(), l)
	}
	if l.Quantile(0) > l.Quantile(0.5) || l.Quantile(0.5) > l.Quantile(1) || l.Quantile(0) < time.Millisecond {
		t.Fatalf("latencies not sorted or too short: %v %v %v", l.Quantile(0), l.Quantile(0.5), l.Quantile(1))
	}
}

func TestMedian(t *testing.T) {
	calls := 0
	d, err := Median(context.Background(), 2, 5, func(context.Context) error {
		calls++
		time.Sleep(time.Duration(calls) * time.Millisecond)
		return nil
	})
	// Warmups take 1 and 2 ms; the timed runs 3…7 ms, whose median is 5.
	if err != nil || calls != 7 || d < 5*time.Millisecond || d >= 6*time.Millisecond+time.Millisecond {
		t.Fatalf("median %v after %d calls, err %v", d, calls, err)
	}
	boom := errors.New("boom")
	_, err = Median(context.Background(), 0, 3, func(context.Context) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}
