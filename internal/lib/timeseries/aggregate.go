package timeseries

import "math"

// AggMode selects how Aggregate combines the per-GPU values at a step.
type AggMode int

const (
	// Sum adds the values, as for memory byte counts.
	Sum AggMode = iota
	// Mean averages the values, as for utilisation percentages.
	Mean
)

// Aggregate combines per-GPU series into one per-pod series. Each input
// series must be sorted by T ascending, as RangeQuery returns it. A point
// is produced at every timestamp present in at least one series, from the
// GPUs that have a value there; GPUs without a value at that timestamp do
// not count towards a Mean. Timestamps line up exactly for sampled
// queries (all series share the steps); for raw queries only samples
// taken at the very same instant are combined.
//
// Values are added with Kahan-Neumaier compensation and the mean is
// sum/count, as Prometheus's sum and avg do, which keeps sums of decimal
// inputs within a few ulps of the exact decimal so FormatValue can print
// them cleanly.
func Aggregate(series [][]Point, mode AggMode) []Point {
	next := make([]int, len(series))
	var out []Point
	for {
		// Find the earliest timestamp not yet consumed in any series.
		first := -1
		for s, pts := range series {
			if next[s] < len(pts) && (first < 0 || pts[next[s]].T.Before(series[first][next[first]].T)) {
				first = s
			}
		}
		if first < 0 {
			return out
		}
		t := series[first][next[first]].T
		var sum, c float64
		n := 0
		for s, pts := range series {
			if next[s] < len(pts) && pts[next[s]].T.Equal(t) {
				sum, c = kahanInc(pts[next[s]].V, sum, c)
				n++
				next[s]++
			}
		}
		v := sum + c
		if mode == Mean {
			v = sum/float64(n) + c/float64(n)
		}
		out = append(out, Point{T: t, V: v})
	}
}

// kahanInc adds inc to the compensated sum (sum, c), ported from
// Prometheus's util/kahansum. The explicit float64 conversions stop the
// compiler from fusing operations across the call, which would break the
// compensation.
func kahanInc(inc, sum, c float64) (newSum, newC float64) {
	inc, sum, c = float64(inc), float64(sum), float64(c)
	t := sum + inc
	switch {
	case math.IsInf(t, 0):
		c = 0
	case math.Abs(sum) >= math.Abs(inc):
		c += (sum - t) + inc
	default:
		c += (inc - t) + sum
	}
	return float64(t), float64(c)
}
