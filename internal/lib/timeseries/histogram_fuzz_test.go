package timeseries

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// FuzzHistogramQuantile feeds ParseBuckets with stored bucket maps,
// written as "bound=count;bound=count", and checks HistogramQuantile's
// invariants on whatever parses.
func FuzzHistogramQuantile(f *testing.F) {
	seeds := []struct {
		spec string
		q    float64
	}{
		{"0.1=50;.2=70;1e0=110;+Inf=120", 0.2},
		{"-.2=10;-0.1=20;0.3=20;+Inf=30", 0.5},
		{"0=0;2=1;4=2;6=3;+Inf=3", 1. / 6.},
		{"0.1=20;1=10;10=50;100=40;1000=90;+Inf=80", 0.99},
		{"0.1=1;0.2=1;2e-1=1;2.0e-1=1;+Inf=4", 0.75},
		{"+inf=0;+Inf=0", 0.5},
		{"0.1=0;0.2=0;+Inf=0", 0},
		{"0.001=10;0.01=50;0.1=90;1.0=99;+Inf=100", 1},
		{"10=10;15=15;20=15.00000000001;30=15;+Inf=15", 0.9},
		{"1=0;+Inf=5", 0},
		{"0.5=3", 0.5},
		{"-Inf=1;0=2;+Inf=3", 0.5},
		{"1=0;+Inf=1e-320", 0.5},
		{"1=x", 0.5},
		{"", 0.5},
	}
	for _, s := range seeds {
		f.Add(s.spec, s.q)
	}
	f.Fuzz(func(t *testing.T, spec string, q float64) {
		stored := map[string]string{}
		for _, kv := range strings.Split(spec, ";") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				stored[k] = v
			}
		}
		buckets, err := ParseBuckets(stored)
		if err != nil {
			return
		}
		if len(buckets) != len(stored) {
			t.Fatalf("%d buckets from %d entries", len(buckets), len(stored))
		}
		for i, b := range buckets {
			if math.IsNaN(b.UpperBound) || math.IsNaN(b.Count) || math.IsInf(b.Count, 0) || b.Count < 0 {
				t.Fatalf("invalid bucket %v accepted", b)
			}
			if i > 0 && b.UpperBound < buckets[i-1].UpperBound {
				t.Fatalf("buckets not sorted: %v", buckets)
			}
		}

		orig := slices.Clone(buckets)
		got := HistogramQuantile(q, buckets)
		if !slices.Equal(buckets, orig) {
			t.Fatalf("input modified: %v, was %v", buckets, orig)
		}
		switch {
		case math.IsNaN(q):
			if !math.IsNaN(got) {
				t.Fatalf("q=NaN gave %v", got)
			}
			return
		case q < 0 || q > 1:
			if want := math.Inf(int(math.Copysign(1, q))); got != want {
				t.Fatalf("q=%v gave %v, want %v", q, got, want)
			}
			return
		}

		lowest, highestFinite, total := math.Inf(1), math.Inf(-1), 0.0
		bounds := map[float64]bool{}
		for _, b := range buckets {
			if b.Count > 0 && b.Count < 1e-300 {
				// Prometheus takes a count this close to a neighbouring 0
				// for float noise and zeroes it, so "no observations"
				// is not decidable from the input alone.
				return
			}
			bounds[b.UpperBound] = true
			lowest = math.Min(lowest, b.UpperBound)
			if !math.IsInf(b.UpperBound, 0) {
				highestFinite = math.Max(highestFinite, b.UpperBound)
			}
			total = math.Max(total, b.Count) // what the monotonic fix makes of the +Inf count
		}
		if !bounds[math.Inf(1)] || len(bounds) < 2 || total == 0 {
			if !math.IsNaN(got) {
				t.Fatalf("%v: q=%v gave %v, want NaN", buckets, q, got)
			}
			return
		}
		// An infinite lower bucket or bounds near the float range make
		// Prometheus's interpolation overflow; the range check below is
		// meaningful only without them.
		if math.IsInf(lowest, -1) || math.Abs(lowest) > 1e300 || math.Abs(highestFinite) > 1e300 {
			return
		}
		if math.IsNaN(got) {
			// 0·(0/0) when the rank is 0 and the lowest bucket is empty,
			// exactly as Prometheus computes it.
			if q*total != 0 {
				t.Fatalf("%v: q=%v gave NaN", buckets, q)
			}
			return
		}
		lo := math.Min(0, lowest)
		slack := 1e-12 * math.Max(math.Abs(lo), math.Abs(highestFinite))
		if got < lo-slack || got > highestFinite+slack {
			t.Fatalf("%v: q=%v gave %v, outside [%v, %v]", buckets, q, got, lo, highestFinite)
		}
		// Quantiles do not decrease with q.
		if lower := HistogramQuantile(q/2, buckets); !math.IsNaN(lower) && lower > got+slack {
			t.Fatalf("%v: q=%v gave %v but q=%v gave %v", buckets, q, got, q/2, lower)
		}
	})
}
