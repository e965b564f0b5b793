package bench

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Load is the outcome of one run of the load driver.
type Load struct {
	Requests int
	Errors   int
	FirstErr error
	Elapsed  time.Duration
	// Latencies of every request, sorted.
	Latencies []time.Duration
}

// PerSecond is requests completed per second of wall time.
func (l Load) PerSecond() float64 {
	if l.Elapsed <= 0 {
		return 0
	}
	return float64(l.Requests) / l.Elapsed.Seconds()
}

// Quantile is the q-th latency (0 ≤ q ≤ 1).
func (l Load) Quantile(q float64) time.Duration {
	if len(l.Latencies) == 0 {
		return 0
	}
	return l.Latencies[min(len(l.Latencies)-1, int(q*float64(len(l.Latencies))))]
}

// Drive runs requests calls of do from clients goroutines at once, each
// taking the next request number (0 … requests−1) as soon as its last one
// is answered: a closed loop with a bounded request count. A call that
// errs counts as an error and the run goes on.
func Drive(ctx context.Context, clients, requests int, do func(ctx context.Context, i int) error) Load {
	var next atomic.Int64
	lat := make([]time.Duration, requests)
	var (
		mu       sync.Mutex
		errs     int
		firstErr error
		wg       sync.WaitGroup
	)
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= requests || ctx.Err() != nil {
					return
				}
				t := time.Now()
				err := do(ctx, i)
				lat[i] = time.Since(t)
				if err != nil {
					mu.Lock()
					if errs++; firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	l := Load{Requests: requests, Errors: errs, FirstErr: firstErr, Elapsed: time.Since(start), Latencies: lat}
	sort.Slice(l.Latencies, func(i, j int) bool { return l.Latencies[i] < l.Latencies[j] })
	return l
}

// Median runs fn warmup times untimed, then n times, and answers the median
// duration; the first error stops it.
func Median(ctx context.Context, warmup, n int, fn func(ctx context.Context) error) (time.Duration, error) {
	for i := 0; i < warmup; i++ {
		if err := fn(ctx); err != nil {
			return 0, err
		}
	}
	d := make([]time.Duration, n)
	for i := range d {
		t := time.Now()
		if err := fn(ctx); err != nil {
			return 0, err
		}
		d[i] = time.Since(t)
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[n/2], nil
}
