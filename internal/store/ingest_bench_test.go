package store_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// benchBatch is n samples of one pod: 8 per-GPU series of n/8 samples,
// one every 10 s, as an agent's exporter would send them.
func benchBatch(n int, start time.Time) []models.MetricSample {
	out := make([]models.MetricSample, 0, n)
	per := max(n/8, 1)
	for g := range 8 {
		labels := `{"gpu":"` + strconv.Itoa(g) + `"}`
		for i := range per {
			if len(out) == n {
				return out
			}
			out = append(out, models.MetricSample{PodID: benchPod, Type: "GPU_UTILIZATION_PER_GPU", Labels: labels,
				TS: start.Add(time.Duration(i) * 10 * time.Second), Value: float64(i % 100)})
		}
	}
	return out
}

// BenchmarkIngestBatch writes one ingestion batch of growing size
// (store.IngestSamples, what POST /api/v1/metrics/samples does after its
// checks) into a table already holding 200,000 samples, on each engine,
// while another writer commits a one-row transaction every 2 ms, as
// restarts and agent reports do: writer-wait-max-ms is the longest that
// writer waited for its transaction (the database's writer on SQLite),
// against writer-wait-p50-ms. MaxBatchSamples is set from these figures
// (docs/decisions/0038-pod-metrics-cost.md). GPUGRAPH_INGEST_SIZES=10000,100000 picks the sizes.
func BenchmarkIngestBatch(b *testing.B) {
	sizes := []int{10_000, 50_000, 100_000, 200_000, 400_000}
	if env := os.Getenv("GPUGRAPH_INGEST_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			st := storetest.Open(b, d)
			ctx := context.Background()
			if _, err := dataset.LoadFile(ctx, st, []byte(benchFixture)); err != nil {
				b.Fatal(err)
			}
			storetest.SeedSeries(b, st, benchPod, "CPU_USAGE_CORES", "{}", benchStart, 10*time.Second, 200_000)
			for _, n := range sizes {
				b.Run(fmt.Sprintf("samples=%d", n), func(b *testing.B) {
					var waits []time.Duration
					for i := range b.N {
						batch := benchBatch(n, benchStart.Add(time.Duration(i)*time.Hour))
						w := startWriter(b, st)
						if err := st.IngestSamples(ctx, 1, []string{benchPod}, batch, nil, func(map[string]bool) error { return nil }); err != nil {
							b.Fatal(err)
						}
						waits = append(waits, w.stop()...)
					}
					b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
					slices.Sort(waits)
					if len(waits) > 0 {
						b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1000, "writer-wait-p50-ms")
						b.ReportMetric(float64(waits[len(waits)-1].Microseconds())/1000, "writer-wait-max-ms")
					}
				})
			}
		})
	}
}

// writer commits a one-row transaction every 2 ms until stopped, and
// keeps how long each took.
type writer struct {
	stopped atomic.Bool
	wg      sync.WaitGroup
	mu      sync.Mutex
	waits   []time.Duration
}

func startWriter(tb testing.TB, st *store.Store) *writer {
	w := &writer{}
	w.wg.Go(func() {
		for !w.stopped.Load() {
			t0 := time.Now()
			err := st.InTx(context.Background(), func(tx *store.Txn) error {
				return st.TouchBenchRow(tx)
			})
			if err != nil {
				tb.Error(err)
				return
			}
			w.mu.Lock()
			w.waits = append(w.waits, time.Since(t0))
			w.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	})
	return w
}

func (w *writer) stop() []time.Duration {
	w.stopped.Store(true)
	w.wg.Wait()
	return w.waits
}
