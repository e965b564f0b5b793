package timeseries

import (
	"math"
	"testing"
	"time"
)

// base is an arbitrary whole-second instant the tests count from.
var base = time.Date(2024, 12, 20, 14, 0, 0, 0, time.UTC)

// at returns base plus d.
func at(d time.Duration) time.Time { return base.Add(d) }

// fmtTime writes an instant for test output and examples: RFC 3339 UTC
// with the fraction's trailing zeros dropped (the API writes instants
// through models.FormatTime).
func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.999Z07:00") }

// ms is shorthand for a number of milliseconds.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// series builds samples at base+offsets[i] with values vals[i].
func series(offsets []time.Duration, vals []float64) []Sample {
	out := make([]Sample, len(offsets))
	for i := range offsets {
		out[i] = Sample{T: at(offsets[i]), V: vals[i]}
	}
	return out
}

// samePoints fails the test unless got and want hold the same instants
// and the same values (NaN equal to NaN).
func samePoints(t *testing.T, got, want []Point) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d points %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if !got[i].T.Equal(want[i].T) || !sameFloat(got[i].V, want[i].V) {
			t.Fatalf("point %d: got %s=%v, want %s=%v", i,
				fmtTime(got[i].T), got[i].V, fmtTime(want[i].T), want[i].V)
		}
	}
}

func sameFloat(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// closeTo reports whether got is within a relative 1e-12 of want, the
// tolerance Prometheus's own quantile tests use; NaN and infinities must
// match exactly.
func closeTo(got, want float64) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) || want == 0 {
		return sameFloat(got, want)
	}
	return math.Abs(got-want) <= 1e-12*math.Abs(want)
}
