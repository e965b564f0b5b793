package timeseries

import (
	"math/rand/v2"
	"testing"
	"time"
)

// gappy has samples each minute from 14:00 to 14:02, then nothing until
// 14:20, longer than the lookback delta.
var gappy = series(
	[]time.Duration{0, time.Minute, 2 * time.Minute, 20 * time.Minute},
	[]float64{1, 2, 3, 4},
)

func TestAtSteps(t *testing.T) {
	tests := []struct {
		name  string
		steps []time.Duration
		want  []Point
	}{
		{"before the first sample", []time.Duration{-time.Second}, nil},
		{"between samples takes the older one",
			[]time.Duration{30 * time.Second, 90 * time.Second},
			[]Point{{at(30 * time.Second), 1}, {at(90 * time.Second), 2}}},
		{"a sample at the step is used",
			[]time.Duration{2 * time.Minute}, []Point{{at(2 * time.Minute), 3}}},
		{"a sample 1ms inside the lookback is used",
			[]time.Duration{7*time.Minute - ms(1)}, []Point{{at(7*time.Minute - ms(1)), 3}}},
		// Prometheus 3 excludes a sample exactly LookbackDelta old
		// (engine.go: `t <= refTime - lookbackDelta`).
		{"a sample exactly at the lookback boundary is not",
			[]time.Duration{7 * time.Minute}, nil},
		{"gap longer than the lookback is left out",
			[]time.Duration{0, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute},
			[]Point{{at(0), 1}, {at(5 * time.Minute), 3}, {at(20 * time.Minute), 4}}},
		{"after the last sample within lookback",
			[]time.Duration{24*time.Minute + 59*time.Second}, []Point{{at(24*time.Minute + 59*time.Second), 4}}},
		{"descending steps still evaluate each",
			[]time.Duration{20 * time.Minute, time.Minute},
			[]Point{{at(20 * time.Minute), 4}, {at(time.Minute), 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			steps := make([]time.Time, len(tc.steps))
			for i, d := range tc.steps {
				steps[i] = at(d)
			}
			samePoints(t, AtSteps(gappy, steps), tc.want)
		})
	}
}

func TestAtStepsDuplicateTimestampLastWins(t *testing.T) {
	s := series([]time.Duration{0, time.Minute, time.Minute}, []float64{1, 2, 5})
	samePoints(t, AtSteps(s, []time.Time{at(time.Minute)}), []Point{{at(time.Minute), 5}})
}

func TestRangeQuery(t *testing.T) {
	tests := []struct {
		name       string
		start, end time.Time
		n          int
		want       []Point
	}{
		{"sampled with a gap", at(0), at(20 * time.Minute), 5,
			[]Point{{at(0), 1}, {at(5 * time.Minute), 3}, {at(20 * time.Minute), 4}}},
		{"one sample at end", at(0), at(3 * time.Minute), 1, []Point{{at(3 * time.Minute), 3}}},
		{"raw", at(time.Minute), at(20 * time.Minute), 0,
			[]Point{{at(time.Minute), 2}, {at(2 * time.Minute), 3}, {at(20 * time.Minute), 4}}},
		{"raw excludes samples outside", at(ms(1)), at(2*time.Minute - ms(1)), 0,
			[]Point{{at(time.Minute), 2}}},
		{"raw with nothing in range", at(3 * time.Minute), at(19 * time.Minute), 0, nil},
		{"raw after all samples", at(time.Hour), at(2 * time.Hour), 0, nil},
		{"end before start", at(time.Hour), at(0), 10, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samePoints(t, RangeQuery(gappy, tc.start, tc.end, tc.n), tc.want)
		})
	}
}

// TestRangeQueryMatchesReference checks the binary-search sampling
// against a direct reading of the lookback rule, and that the samples
// from the first step's lookback to the last step (the window the store
// reads) are all the query needs.
func TestRangeQueryMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		var samples []Sample
		ts := at(-10 * time.Minute)
		for i := rng.IntN(300); i > 0; i-- {
			// Irregular spacing, sometimes longer than the lookback.
			ts = ts.Add(time.Duration(rng.Int64N(int64(7 * time.Minute))))
			samples = append(samples, Sample{T: ts, V: float64(rng.IntN(1000))})
		}
		start := at(time.Duration(rng.Int64N(int64(time.Hour))))
		end := start.Add(time.Duration(rng.Int64N(int64(3 * time.Hour))))
		n := rng.IntN(50) + 1

		var want []Point
		for _, step := range Steps(start, end, n) {
			var found *Sample
			for i := range samples {
				if samples[i].T.After(step.Add(-LookbackDelta)) && !samples[i].T.After(step) {
					found = &samples[i]
				}
			}
			if found != nil {
				want = append(want, Point{T: step, V: found.V})
			}
		}
		samePoints(t, RangeQuery(samples, start, end, n), want)

		// PickAtSteps names the very samples AtSteps takes.
		times := make([]time.Time, len(samples))
		for i, s := range samples {
			times[i] = s.T
		}
		var picked []Point
		for _, p := range PickAtSteps(times, Steps(start, end, n)) {
			picked = append(picked, Point{T: p.Step, V: samples[p.Index].V})
		}
		samePoints(t, picked, want)

		var window []Sample
		steps := Steps(start, end, n)
		from, to := steps[0].Add(-LookbackDelta), steps[len(steps)-1]
		for _, s := range samples {
			if !s.T.Before(from) && !s.T.After(to) {
				window = append(window, s)
			}
		}
		samePoints(t, RangeQuery(window, start, end, n), want)
	}
}
