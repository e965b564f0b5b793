package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/httpapi/servertest"
	"gpugraph/store/storetest"
)

// BenchmarkPodMetrics asks the REST endpoint for 1,000 points of a series
// of 1,000,000 stored samples (one every 10 s, about 116 days), on SQLite
// and, when TEST_DATABASE_URL is set, PostgreSQL: the whole request, JSON
// included. It needs no flag beyond -bench; seeding takes a few seconds
// per engine. store's BenchmarkMetricRead compares the read strategies.
func BenchmarkPodMetrics(b *testing.B) {
	const stored = 1_000_000
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add((stored - 1) * 10 * time.Second)
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			st := storetest.Open(b, d)
			env := servertest.New(b, st, servertest.Base)
			storetest.SeedSeries(b, st, train1, "GPU_UTILIZATION_PER_GPU", `{"gpu":"0"}`, start, 10*time.Second, stored)
			path := metricsPath(trainWL, train1, "metricType", "GPU_UTILIZATION_PER_GPU",
				"start", start.Format(time.RFC3339), "end", end.Format(time.RFC3339), "numberOfSamples", "1000")
			for b.Loop() {
				status, body := env.Do(http.MethodGet, path, "acme-workloads", nil, nil)
				if status != http.StatusOK || strings.Count(string(body), `"value"`) != 1000 {
					b.Fatalf("%d, %d values", status, strings.Count(string(body), `"value"`))
				}
			}
		})
	}
}
