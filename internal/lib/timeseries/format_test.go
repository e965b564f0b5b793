package timeseries

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestFormatValue(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{85, "85"},
		{3.5, "3.5"},
		{0.0734, "0.0734"},
		{0.1 + 0.2, "0.3"},
		{84.99999999999999, "85"},
		{85.00000000000001, "85"},
		{(0.1 + 0.2 + 0.3) / 3, "0.2"},
		{100.0 / 3, "33.333333333333"},
		{2.0 / 3, "0.66666666666667"},
		{1211180777472, "1211180777472"},
		{99999999999999, "99999999999999"},
		{1e-7, "0.0000001"},
		{1.5e15, "1500000000000000"},
		{-0.0734, "-0.0734"},
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
		{math.MaxFloat64, "17976931348623" + strings.Repeat("0", 295)},
	}
	for _, tc := range tests {
		if got := FormatValue(tc.in); got != tc.want {
			t.Errorf("FormatValue(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func ExampleFormatValue() {
	fmt.Println(FormatValue(0.1+0.2), FormatValue(84.99999999999999), FormatValue(0.0734), FormatValue(math.Inf(1)))
	// Output: 0.3 85 0.0734 +Inf
}
