package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store/storetest"
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
			storetest.SeedSeries(b, st, servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU", `{"gpu":"0"}`, start, 10*time.Second, stored)
			path := servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "GPU_UTILIZATION_PER_GPU",
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

// BenchmarkPodMetricsPoints prices a point of a pod metrics answer, the
// unit podMetrics' complexity and podmetrics.MaxPoints count: 8 per-GPU
// series of 100,000 samples each (one every 10 s), read through the REST
// path as GPU_UTILIZATION_PER_GPU and GPU_UTILIZATION (the mean, computed
// from the same 8 series) at 1,000 steps — 9,000 points from 16 series
// read — and as every stored sample of a window holding 10,000 per series.
// ns/point is the whole request's wall time (its CPU on SQLite, where the
// engine runs in the process) by point answered.
func BenchmarkPodMetricsPoints(b *testing.B) {
	const stored = 100_000
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add((stored - 1) * 10 * time.Second)
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			st := storetest.Open(b, d)
			servertest.New(b, st, servertest.Base)
			// The server alone: servertest's answer checks would price
			// themselves (a schema validation of every value).
			srv := httptest.NewServer(httpapi.New(servertest.Wire(st, servertest.Options{}, httpapi.Config{})))
			b.Cleanup(srv.Close)
			for g := range 8 {
				storetest.SeedSeries(b, st, servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU", fmt.Sprintf(`{"gpu":"%d"}`, g), start, 10*time.Second, stored)
			}
			for _, tc := range []struct {
				name   string
				params []string
				points int
			}{
				{"steps", []string{"metricType", "GPU_UTILIZATION_PER_GPU,GPU_UTILIZATION", "start", start.Format(time.RFC3339),
					"end", end.Format(time.RFC3339), "numberOfSamples", "1000"}, 9000},
				{"raw", []string{"metricType", "GPU_UTILIZATION_PER_GPU", "start", start.Format(time.RFC3339),
					"end", start.Add(9999 * 10 * time.Second).Format(time.RFC3339), "numberOfSamples", "0"}, 80000},
			} {
				b.Run(tc.name, func(b *testing.B) {
					path := servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, tc.params...)
					for b.Loop() {
						req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
						req.Header.Set("Authorization", "Bearer acme-workloads")
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							b.Fatal(err)
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK || strings.Count(string(body), `"value"`) != tc.points {
							b.Fatalf("%d, %d values: %.300s", resp.StatusCode, strings.Count(string(body), `"value"`), body)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tc.points), "ns/point")
				})
			}
		})
	}
}
