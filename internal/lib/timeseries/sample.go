package timeseries

import (
	"sort"
	"time"
)

// Sample is one stored value of a series.
type Sample struct {
	T time.Time
	V float64
}

// Point is one value of a query result. For sampled queries T is the step
// time, not the time of the stored sample the value came from.
type Point = Sample

// RangeQuery answers a request for n samples between start and end from
// the stored samples of one series, which must be sorted by T ascending.
// n == 0 returns the raw samples in [start, end] (see Raw); otherwise the
// series is evaluated at Steps(start, end, n) (see AtSteps).
func RangeQuery(samples []Sample, start, end time.Time, n int) []Point {
	if n <= 0 {
		return Raw(samples, start, end)
	}
	return AtSteps(samples, Steps(start, end, n))
}

// AtSteps evaluates a series at each step the way a Prometheus instant
// vector selector does: the value at step t is the newest sample with
// t−LookbackDelta < T <= t. The window is left-open, as in Prometheus 3.0
// and later (earlier versions also used a sample exactly LookbackDelta
// old). Steps with no such sample are left out of the result.
//
// samples must be sorted by T ascending; of samples sharing a timestamp
// the last one wins. steps should be ascending (as Steps returns them).
// Each step costs a binary search, so a few points out of a long series
// are cheap. Prometheus's staleness markers have no counterpart in
// stored rows, so every value, NaN included, is taken as is.
func AtSteps(samples []Sample, steps []time.Time) []Point {
	points := make([]Point, 0, len(steps))
	atSteps(len(samples), func(i int) time.Time { return samples[i].T }, steps, func(step time.Time, i int) {
		points = append(points, Point{T: step, V: samples[i].V})
	})
	return points
}

// Pick says which stored sample answers a step: Index is its position in
// the series, which may hold values of any kind.
type Pick struct {
	Step  time.Time
	Index int
}

// PickAtSteps is AtSteps for a series whose values are not numbers (a
// histogram's buckets): given the times of its samples, sorted ascending,
// it answers for every step that has one which sample AtSteps would take.
func PickAtSteps(times []time.Time, steps []time.Time) []Pick {
	picks := make([]Pick, 0, len(steps))
	atSteps(len(times), func(i int) time.Time { return times[i] }, steps, func(step time.Time, i int) {
		picks = append(picks, Pick{Step: step, Index: i})
	})
	return picks
}

// atSteps calls found(step, i) for each step answered by sample i of a
// series of n samples whose times timeOf gives, in ascending order.
func atSteps(n int, timeOf func(i int) time.Time, steps []time.Time, found func(step time.Time, i int)) {
	lo := 0
	for k, t := range steps {
		if k > 0 && t.Before(steps[k-1]) {
			lo = 0
		}
		// i is the first sample after t; sample i-1 is the candidate.
		i := lo + sort.Search(n-lo, func(j int) bool {
			return timeOf(lo + j).After(t)
		})
		lo = i
		if i == 0 {
			continue
		}
		if !timeOf(i - 1).After(t.Add(-LookbackDelta)) {
			continue
		}
		found(t, i-1)
	}
}

// Raw returns the samples with start <= T <= end, for numberOfSamples=0.
// samples must be sorted by T ascending. The result shares memory with
// samples rather than copying what may be a long slice.
func Raw(samples []Sample, start, end time.Time) []Point {
	i := sort.Search(len(samples), func(j int) bool { return !samples[j].T.Before(start) })
	k := sort.Search(len(samples), func(j int) bool { return samples[j].T.After(end) })
	if k <= i {
		return nil
	}
	return samples[i:k:k]
}
