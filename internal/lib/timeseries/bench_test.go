package timeseries

import (
	"testing"
	"time"
)

// BenchmarkRangeQuery samples 1,000 points out of 1,000,000 stored
// samples taken every 10s (about 116 days).
func BenchmarkRangeQuery(b *testing.B) {
	const stored = 1_000_000
	samples := make([]Sample, stored)
	for i := range samples {
		samples[i] = Sample{T: base.Add(time.Duration(i) * 10 * time.Second), V: float64(i % 100)}
	}
	start, end := samples[0].T, samples[stored-1].T
	b.ReportAllocs()
	for b.Loop() {
		if got := RangeQuery(samples, start, end, 1000); len(got) != 1000 {
			b.Fatalf("got %d points", len(got))
		}
	}
}

// BenchmarkAggregate combines eight sampled GPUs of 1,000 points.
func BenchmarkAggregate(b *testing.B) {
	series := make([][]Point, 8)
	for g := range series {
		series[g] = make([]Point, 1000)
		for i := range series[g] {
			series[g][i] = Point{T: base.Add(time.Duration(i) * time.Minute), V: float64(g*i%97) + 0.5}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		Aggregate(series, Mean)
	}
}
