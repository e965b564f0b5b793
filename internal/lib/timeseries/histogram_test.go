package timeseries

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// Expectations below are taken from Prometheus's own tests:
// promql/promqltest/testdata/histograms.test (classic "_bucket" series
// evaluated at 50m unless noted; counts are the loaded values there) and
// promql/quantile_test.go (TestBucketQuantile_ForcedMonotonicity).
var (
	// testhistogram{start="positive"}
	promPositive = map[string]string{"0.1": "50", ".2": "70", "1e0": "110", "+Inf": "120"}
	// testhistogram{start="negative"}
	promNegative = map[string]string{"-.2": "10", "-0.1": "20", "0.3": "20", "+Inf": "30"}
	// testhistogram2 at 7m
	promMiddles = map[string]string{"0": "0", "2": "1", "4": "2", "6": "3", "+Inf": "3"}
	// testhistogram3{start="positive"}
	prom3Positive = map[string]string{"0": "0", "0.1": "50", ".2": "70", "1e0": "110", "+Inf": "110"}
	// testhistogram3{start="negative"}
	prom3Negative = map[string]string{"-.25": "0", "-.2": "10", "-0.1": "20", "0.3": "20", "+Inf": "20"}
	// nonmonotonic_bucket
	promNonMonotonic = map[string]string{"0.1": "20", "1": "10", "10": "50", "100": "40", "1000": "90", "+Inf": "80"}
	// mixed_bucket{instance="ins1"}: one bound spelt three ways
	promMixed = map[string]string{"0.1": "1", "0.2": "1", "2e-1": "1", "2.0e-1": "1", "+Inf": "4"}
	// mixed_bucket{instance="ins2"}: only +Inf, spelt twice
	promMixedEmpty = map[string]string{"+inf": "0", "+Inf": "0"}
	// empty_bucket
	promEmpty = map[string]string{"0.1": "0", "0.2": "0", "+Inf": "0"}
)

func TestHistogramQuantilePrometheusCases(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name    string
		buckets map[string]string
		q       float64
		want    float64
		text    string // FormatValue of the result
	}{
		{"testhistogram positive q=0", promPositive, 0, 0, "0"},
		{"testhistogram positive q=0.2", promPositive, 0.2, 0.048, "0.048"},
		{"testhistogram positive q=0.5", promPositive, 0.5, 0.15, "0.15"},
		{"testhistogram positive q=0.8", promPositive, 0.8, 0.72, "0.72"},
		{"testhistogram positive q=1 (+Inf bucket)", promPositive, 1, 1, "1"},
		{"testhistogram negative q=0 (lowest bound <= 0)", promNegative, 0, -0.2, "-0.2"},
		{"testhistogram negative q=0.2", promNegative, 0.2, -0.2, "-0.2"},
		{"testhistogram negative q=0.5", promNegative, 0.5, -0.15, "-0.15"},
		{"testhistogram negative q=0.8 (+Inf bucket)", promNegative, 0.8, 0.3, "0.3"},
		{"testhistogram negative q=1", promNegative, 1, 0.3, "0.3"},
		{"testhistogram q=-0.1", promPositive, -0.1, -inf, "-Inf"},
		{"testhistogram q=1.01", promPositive, 1.01, inf, "+Inf"},
		{"testhistogram q=NaN", promNegative, nan, nan, "NaN"},
		{"testhistogram2 q=1/6", promMiddles, 1. / 6., 1, "1"},
		{"testhistogram2 q=0.5", promMiddles, 0.5, 3, "3"},
		{"testhistogram2 q=5/6", promMiddles, 5. / 6., 5, "5"},
		{"testhistogram3 positive q=0", prom3Positive, 0, 0, "0"},
		{"testhistogram3 positive q=0.25", prom3Positive, 0.25, 0.055, "0.055"},
		{"testhistogram3 positive q=0.5", prom3Positive, 0.5, 0.125, "0.125"},
		{"testhistogram3 positive q=0.75", prom3Positive, 0.75, 0.45, "0.45"},
		{"testhistogram3 positive q=1", prom3Positive, 1, 1, "1"},
		{"testhistogram3 negative q=0", prom3Negative, 0, -0.25, "-0.25"},
		{"testhistogram3 negative q=0.25", prom3Negative, 0.25, -0.225, "-0.225"},
		{"testhistogram3 negative q=0.5", prom3Negative, 0.5, -0.2, "-0.2"},
		{"testhistogram3 negative q=0.75", prom3Negative, 0.75, -0.15, "-0.15"},
		{"testhistogram3 negative q=1", prom3Negative, 1, -0.1, "-0.1"},
		{"nonmonotonic q=0.01", promNonMonotonic, 0.01, 0.0045, "0.0045"},
		{"nonmonotonic q=0.5", promNonMonotonic, 0.5, 8.5, "8.5"},
		{"nonmonotonic q=0.99", promNonMonotonic, 0.99, 979.75, "979.75"},
		{"mixed le spellings q=0.5", promMixed, 0.5, 0.15, "0.15"},
		{"mixed le spellings q=0.75", promMixed, 0.75, 0.2, "0.2"},
		{"mixed le spellings q=1", promMixed, 1, 0.2, "0.2"},
		{"only +Inf buckets", promMixedEmpty, 0.5, nan, "NaN"},
		{"no observations", promEmpty, 0.2, nan, "NaN"},
		{"no +Inf bucket", map[string]string{"0.1": "1", "1": "2"}, 0.5, nan, "NaN"},
		{"single +Inf bucket", map[string]string{"+Inf": "100"}, 0.5, nan, "NaN"},
		{"no buckets", nil, 0.5, nan, "NaN"},
		{"no buckets, q < 0", nil, -1, -inf, "-Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buckets, err := ParseBuckets(tc.buckets)
			if err != nil {
				t.Fatal(err)
			}
			got := HistogramQuantile(tc.q, buckets)
			if !closeTo(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if s := FormatValue(got); s != tc.text {
				t.Errorf("formatted %q, want %q", s, tc.text)
			}
		})
	}
}

// TestHistogramQuantileSmallDeltas ports the cases of Prometheus's
// TestBucketQuantile_ForcedMonotonicity whose inputs differ only by float
// noise: the noisy histogram must answer what the clean one does.
func TestHistogramQuantileSmallDeltas(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name    string
		buckets []Bucket
		want    map[float64]float64
	}{
		{"simple - monotonic", []Bucket{{10, 10}, {15, 15}, {20, 15}, {30, 15}, {inf, 15}},
			map[float64]float64{1: 15, 0.99: 14.85, 0.9: 13.5, 0.5: 7.5}},
		{"simple - non-monotonic middle", []Bucket{{10, 10}, {15, 15}, {20, 15.00000000001}, {30, 15}, {inf, 15}},
			map[float64]float64{1: 15, 0.99: 14.85, 0.9: 13.5, 0.5: 7.5}},
		{"real example - non-monotonic", []Bucket{
			{1, 6454661.3014166225}, {5, 8339611.2001912957}, {10, 14118319.2444762159},
			{25, 14130031.5272856504}, {50, 46001270.3030008227}, {64, 46008473.8585563824},
			{80, 46008473.8585563898}, {100, 46008473.8585563824}, {250, 46008473.8585563824},
			{1000, 46008473.8585563898}, {inf, 46008473.8585563824}},
			map[float64]float64{1: 64, 0.99: 49.64475715376406, 0.9: 46.39671690938454, 0.5: 31.96098248992002}},
		{"real example 2 - non-monotonic", []Bucket{
			{0.005, 9.6}, {0.01, 9.688888889}, {0.025, 9.755555556}, {0.05, 9.844444444},
			{0.1, 9.888888889}, {0.25, 9.888888889}, {0.5, 9.888888889}, {1, 9.888888889},
			{2.5, 9.888888889}, {5, 9.888888889}, {10, 9.888888889001}, {25, 9.888888889},
			{50, 9.888888888999}, {100, 9.888888889}, {inf, 9.888888889}},
			map[float64]float64{1: 0.1, 0.99: 0.03468750000281261, 0.9: 0.00463541666671875, 0.5: 0.0025752314815104174}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for q, want := range tc.want {
				if got := HistogramQuantile(q, tc.buckets); !closeTo(got, want) {
					t.Errorf("q=%v: got %v, want %v", q, got, want)
				}
			}
		})
	}
}

func TestHistogramQuantileDoesNotModifyInput(t *testing.T) {
	in := []Bucket{{math.Inf(1), 8}, {1, 5}, {0.5, 6}, {1, 1}}
	orig := slices.Clone(in)
	// Merged {0.5:6, 1:6, +Inf:8}: rank 4 falls in the 0.5 bucket.
	if got := HistogramQuantile(0.5, in); !closeTo(got, 1.0/3) {
		t.Errorf("got %v, want 1/3", got)
	}
	if !slices.Equal(in, orig) {
		t.Errorf("input modified: %v, was %v", in, orig)
	}
}

func TestPercentiles(t *testing.T) {
	buckets, err := ParseBuckets(map[string]string{
		"0.001": "10", "0.01": "50", "0.1": "90", "1.0": "99", "+Inf": "100",
	})
	if err != nil {
		t.Fatal(err)
	}
	p50, p90, p99 := Percentiles(buckets)
	got := []string{FormatValue(p50), FormatValue(p90), FormatValue(p99)}
	want := []string{"0.01", "0.1", "1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		if a, b := HistogramQuantile(q, buckets), map[float64]float64{0.5: p50, 0.9: p90, 0.99: p99}[q]; a != b {
			t.Errorf("q=%v: Percentiles %v differs from HistogramQuantile %v", q, b, a)
		}
	}
}

func TestParseBuckets(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name    string
		in      map[string]string
		want    []Bucket
		wantErr string
	}{
		{"sorted by bound", map[string]string{"+Inf": "9", "1.0": "5", "0.001": "1", "0.5": "3"},
			[]Bucket{{0.001, 1}, {0.5, 3}, {1, 5}, {inf, 9}}, ""},
		{"spellings of infinity and exponents", map[string]string{"inf": "2", "1e-3": "1.5", "-Inf": "0"},
			[]Bucket{{math.Inf(-1), 0}, {0.001, 1.5}, {inf, 2}}, ""},
		{"same bound spelt twice kept apart in key order", map[string]string{"1": "2", "1.0": "3", "+Inf": "5"},
			[]Bucket{{1, 2}, {1, 3}, {inf, 5}}, ""},
		{"empty", map[string]string{}, []Bucket{}, ""},
		{"bad bound", map[string]string{"0.1": "1", "le": "2"}, nil, `upper bound "le" is not a number`},
		{"NaN bound", map[string]string{"NaN": "2"}, nil, `upper bound "NaN" is not a number`},
		{"bad count", map[string]string{"0.1": "x"}, nil, `count "x" of bucket "0.1"`},
		{"negative count", map[string]string{"0.1": "-1"}, nil, `count "-1" of bucket "0.1"`},
		{"infinite count", map[string]string{"+Inf": "+Inf"}, nil, `count "+Inf" of bucket "+Inf"`},
		{"NaN count", map[string]string{"1": "NaN"}, nil, `count "NaN" of bucket "1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseBuckets(tc.in)
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalidBucket) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
