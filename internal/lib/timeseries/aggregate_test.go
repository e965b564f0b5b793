package timeseries

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAggregate(t *testing.T) {
	t0, t1, t2 := at(0), at(time.Minute), at(2*time.Minute)
	tests := []struct {
		name   string
		mode   AggMode
		series [][]Point
		want   []string // "offset=value" as formatted
	}{
		{"sum skips a GPU missing at a step", Sum, [][]Point{
			{{t0, 1000}, {t1, 2000}, {t2, 3000}},
			{{t0, 500}, {t2, 700}},
			{{t1, 10}},
		}, []string{"0s=1500", "1m0s=2010", "2m0s=3700"}},
		{"mean divides by the GPUs present", Mean, [][]Point{
			{{t0, 80.1}, {t1, 90.5}},
			{{t0, 90.2}},
		}, []string{"0s=85.15", "1m0s=90.5"}},
		{"mean of decimals without float noise", Mean, [][]Point{
			{{t0, 0.1}}, {{t0, 0.2}}, {{t0, 0.3}},
		}, []string{"0s=0.2"}},
		{"sum of decimals without float noise", Sum, [][]Point{
			{{t0, 0.1}}, {{t0, 0.2}},
		}, []string{"0s=0.3"}},
		{"step with no GPU is left out", Sum, [][]Point{
			{{t0, 1}, {t2, 1}}, {{t0, 2}, {t2, 3}},
		}, []string{"0s=3", "2m0s=4"}},
		{"eight 141GB GPUs need 13 digits", Sum, [][]Point{
			{{t0, 151397597184}}, {{t0, 151397597184}}, {{t0, 151397597184}}, {{t0, 151397597184}},
			{{t0, 151397597184}}, {{t0, 151397597184}}, {{t0, 151397597184}}, {{t0, 151397597184}},
		}, []string{"0s=1211180777472"}},
		{"no series", Sum, nil, nil},
		{"only empty series", Mean, [][]Point{nil, {}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range Aggregate(tc.series, tc.mode) {
				got = append(got, p.T.Sub(base).String()+"="+FormatValue(p.V))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAggregateDecimalExact sums and averages random decimal inputs, as
// utilisation and byte counts arrive, and checks that the formatted
// result is the exact decimal answer.
func TestAggregateDecimalExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	skipped := 0
	for iter := 0; iter < 20000; iter++ {
		gpus := []int{1, 2, 4, 5, 8, 16}[rng.IntN(6)]
		scale := []int64{1, 10, 100, 10000}[rng.IntN(4)] // decimal places 0, 1, 2, 4
		limit := []int64{100, 1e6, 2e11}[rng.IntN(3)]
		var series [][]Point
		exact := new(big.Rat)
		for range gpus {
			units := rng.Int64N(limit * scale)
			v, _ := strconv.ParseFloat(new(big.Rat).SetFrac64(units, scale).FloatString(4), 64)
			series = append(series, []Point{{at(0), v}})
			exact.Add(exact, big.NewRat(units, scale))
		}
		mean := new(big.Rat).Quo(exact, big.NewRat(int64(gpus), 1))
		for _, c := range []struct {
			mode AggMode
			want *big.Rat
		}{{Sum, exact}, {Mean, mean}} {
			got := FormatValue(Aggregate(series, c.mode)[0].V)
			want := decimal(c.want)
			if len(strings.Trim(strings.ReplaceAll(want, ".", ""), "0")) > ValueDigits {
				skipped++
				continue // the exact answer has more digits than are kept
			}
			if got != want {
				t.Fatalf("mode %d of %v: got %s, want %s", c.mode, series, got, want)
			}
		}
	}
	if skipped > 20000 {
		t.Fatalf("only %d of 40000 results were checkable", 40000-skipped)
	}
	t.Logf("%d of 40000 results checked", 40000-skipped)
}

// decimal writes a terminating rational without trailing zeros.
func decimal(r *big.Rat) string {
	s := r.FloatString(20)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

func ExampleAggregate() {
	t0 := time.Date(2024, 12, 20, 14, 30, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	gpu0 := []Point{{T: t0, V: 85}, {T: t1, V: 90.1}}
	gpu1 := []Point{{T: t0, V: 84.9}} // no value at t1
	for _, p := range Aggregate([][]Point{gpu0, gpu1}, Mean) {
		fmt.Println(fmtTime(p.T), FormatValue(p.V))
	}
	// Output:
	// 2024-12-20T14:30:00Z 84.95
	// 2024-12-20T14:31:00Z 90.1
}
