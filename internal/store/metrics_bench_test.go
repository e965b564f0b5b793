package store_test

import (
	"context"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/lib/timeseries"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

const benchPod = "bench-pod"

// benchFixture is the smallest fixture that holds one pod.
const benchFixture = `{
  "projects":  [{"id": "p", "name": "bench", "tenantId": 1}],
  "workloads": [{"id": "w", "name": "bench", "projectId": "p"}],
  "pods":      [{"id": "bench-pod", "name": "bench-0", "workloadId": "w", "tenantId": 1,
                 "createdAt": "2024-01-01T00:00:00Z", "k8sPhase": "Running"}]
}`

var benchStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkMetricRead reads 1,000 points out of a series of 1,000,000
// stored samples (one every 10 s, about 116 days) on each engine: "read" is
// what the endpoint does (MetricAtSteps), "probe" and "scan" the two ways
// it can choose from, forced. The sparse cases ask for 1,000 steps over a
// window holding 100 samples, where the choice goes the other way.
func BenchmarkMetricRead(b *testing.B) {
	const stored = 1_000_000
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			st := storetest.Open(b, d)
			ser := store.Series{PodID: benchPod, Type: "GPU_UTILIZATION_PER_GPU", Labels: `{"gpu":"0"}`}
			if _, err := dataset.LoadFile(context.Background(), st, []byte(benchFixture)); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			storetest.SeedSeries(b, st, ser.PodID, ser.Type, ser.Labels, benchStart, 10*time.Second, stored)
			b.Logf("%s: stored %d samples in %v", d, stored, time.Since(t0).Round(time.Millisecond))
			ctx := context.Background()
			ways := []struct {
				name string
				read func(context.Context, store.Series, []time.Time) ([]timeseries.Point, error)
			}{{"read", st.MetricAtSteps}, {"probe", st.MetricProbe}, {"scan", st.MetricScan}}
			windows := []struct {
				name string
				end  time.Time
			}{
				{"dense", benchStart.Add((stored - 1) * 10 * time.Second)},
				{"sparse", benchStart.Add(99 * 10 * time.Second)},
			}
			for _, w := range windows {
				steps := timeseries.Steps(benchStart, w.end, 1000)
				for _, way := range ways {
					b.Run(w.name+"-"+way.name, func(b *testing.B) {
						for b.Loop() {
							pts, err := way.read(ctx, ser, steps)
							if err != nil {
								b.Fatal(err)
							}
							// Every step has a sample within the lookback.
							if len(pts) != len(steps) {
								b.Fatalf("%d points, want %d", len(pts), len(steps))
							}
						}
					})
				}
			}
		})
	}
}
